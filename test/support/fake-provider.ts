// A scripted stand-in for the OpenAI Chat Completions and Anthropic Messages APIs, for end-to-end tests.
// It listens on 127.0.0.1 only, answers each request with the next scripted step, records every request,
// and models the providers' prefix cache so tests can see when snowpea breaks it.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
	/** Defaults to "call_<n>", n counting defaulted ids across the whole provider from 1. */
	id?: string;
	name: string;
	/** Raw JSON text; may be malformed on purpose. */
	arguments: string;
}

export type ScriptStep =
	| { text?: string; toolCalls?: ScriptedToolCall[]; outputTokens?: number; stopReason?: "stop" | "length" }
	| { status: number; body?: string; headers?: Record<string, string> }
	| { malformed: true }
	| { cut: true; text?: string }
	| { delayMs: number; then: ScriptStep };

export interface RecordedRequest {
	api: "openai" | "anthropic";
	path: string;
	/** Lower-case names; repeated headers joined with ", ". */
	headers: Record<string, string>;
	/** The parsed JSON body ({} when the body was not a JSON object). */
	body: Record<string, unknown>;
	/** The exact request body text. */
	raw: string;
	stream: boolean;
	/** floor(UTF-8 bytes of the canonical prompt / 4). */
	promptTokens: number;
	/** floor(UTF-8 bytes of the common prefix with the previous request's canonical prompt / 4). */
	cachedTokens: number;
}

export interface FakeProviderOptions {
	/** Consumed in order, one step per request. */
	script?: ScriptStep[];
	/** Asked for a step when the script is empty; `index` is the request's position in `requests`. */
	respond?: (request: RecordedRequest, index: number) => ScriptStep | Promise<ScriptStep>;
}

export interface FakeProvider {
	/** http://127.0.0.1:PORT */
	url: string;
	/** url + "/v1": what the openai SDK wants as baseURL. */
	openaiBaseURL: string;
	/** url: the anthropic SDK appends /v1/messages itself. */
	anthropicBaseURL: string;
	/** Every request to a known endpoint, in arrival order, recorded before it is answered. */
	requests: RecordedRequest[];
	/** Appends steps to the script. */
	push(...steps: ScriptStep[]): void;
	/** Closes the server, destroys open sockets and cancels pending delayed answers. */
	close(): Promise<void>;
}

type AnswerStep = {
	text?: string;
	toolCalls?: ScriptedToolCall[];
	outputTokens?: number;
	stopReason?: "stop" | "length";
};

/** An answer ready to send: tool call ids assigned, output tokens decided. */
interface Answer {
	text: string;
	toolCalls: { id: string; name: string; arguments: string }[];
	outputTokens: number;
	stopReason: "stop" | "length";
}

interface Exchange {
	request: RecordedRequest;
	response: ServerResponse;
	model: string;
}

const EXHAUSTED_MESSAGE = "fake provider: script exhausted";

/**
 * Starts a fake provider on 127.0.0.1 with a random port.
 * Routes: POST /v1/chat/completions (OpenAI) and POST /v1/messages (Anthropic); anything else gets 404 and is
 * neither recorded nor given a step. When neither the script nor `respond` has a step, the answer is HTTP 500
 * with a body containing "fake provider: script exhausted" (and `x-should-retry: false`, `retry-after: 0`).
 */
export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
	const script: ScriptStep[] = [...(options.script ?? [])];
	const requests: RecordedRequest[] = [];
	const timers = new Set<NodeJS.Timeout>();
	let previous: { model: string; api: string; prompt: Buffer } | undefined;
	let toolCallCounter = 0;
	let responseCounter = 0;

	const server = createServer((incoming, response) => {
		const chunks: Buffer[] = [];
		incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
		incoming.on("end", () => {
			handle(incoming, response, Buffer.concat(chunks).toString("utf8")).catch((error: unknown) => {
				if (!response.headersSent && !response.destroyed) {
					sendJson(response, 500, { error: { message: `fake provider crashed: ${String(error)}` } });
				} else response.destroy();
			});
		});
	});

	async function handle(incoming: IncomingMessage, response: ServerResponse, raw: string): Promise<void> {
		const path = incoming.url ?? "/";
		const pathname = path.split("?")[0];
		const api =
			incoming.method === "POST" && pathname === "/v1/chat/completions"
				? "openai"
				: incoming.method === "POST" && pathname === "/v1/messages"
					? "anthropic"
					: undefined;
		if (api === undefined) {
			sendJson(response, 404, { error: { message: `fake provider: no route for ${incoming.method} ${path}` } });
			return;
		}
		const body = parseObject(raw);
		const model = typeof body.model === "string" ? body.model : "fake-model";
		const prompt = Buffer.from(canonicalPrompt(api, body), "utf8");
		const cachedBytes =
			previous && previous.model === model && previous.api === api ? commonPrefixLength(previous.prompt, prompt) : 0;
		previous = { model, api, prompt };
		const request: RecordedRequest = {
			api,
			path,
			headers: flattenHeaders(incoming),
			body,
			raw,
			stream: body.stream === true,
			promptTokens: Math.floor(prompt.length / 4),
			cachedTokens: Math.floor(cachedBytes / 4),
		};
		requests.push(request);
		const index = requests.length - 1;
		let step = script.shift();
		if (step === undefined && options.respond) {
			try {
				step = await options.respond(request, index);
			} catch (error) {
				sendJson(response, 500, { error: { message: `fake provider: respond threw: ${String(error)}` } });
				return;
			}
		}
		await play({ request, response, model }, step);
	}

	async function play(exchange: Exchange, step: ScriptStep | undefined): Promise<void> {
		const { request, response } = exchange;
		if (gone(response)) return;
		if (step === undefined) {
			sendError(exchange, 500, EXHAUSTED_MESSAGE, { "x-should-retry": "false", "retry-after": "0" });
			return;
		}
		if ("delayMs" in step) {
			await new Promise<void>((resolve) => {
				const timer = setTimeout(() => {
					timers.delete(timer);
					resolve();
				}, step.delayMs);
				timers.add(timer);
				response.once("close", () => {
					clearTimeout(timer);
					timers.delete(timer);
					resolve();
				});
			});
			await play(exchange, step.then);
			return;
		}
		if ("status" in step) {
			if (step.body !== undefined) {
				response.writeHead(step.status, { "content-type": "application/json", ...step.headers });
				response.end(step.body);
			} else sendError(exchange, step.status, `fake provider: scripted HTTP ${step.status}`, step.headers);
			return;
		}
		if ("malformed" in step) {
			response.writeHead(200, { "content-type": request.stream ? "text/event-stream" : "application/json" });
			// For streams: a line that is not SSE, then an SSE event whose data is not JSON.
			response.end(request.stream ? "this is not json{\ndata: this is not json{\n\n" : "this is not json{");
			return;
		}
		if ("cut" in step) {
			cut(exchange, step.text ?? "");
			return;
		}
		const answer = prepare(step);
		if (request.api === "openai") {
			if (request.stream) streamOpenAI(exchange, answer);
			else sendJson(response, 200, openAICompletion(exchange, answer));
		} else if (request.stream) streamAnthropic(exchange, answer);
		else sendJson(response, 200, anthropicMessage(exchange, answer));
	}

	function prepare(step: AnswerStep): Answer {
		const text = step.text ?? "";
		const toolCalls = (step.toolCalls ?? []).map((call) => ({
			id: call.id ?? `call_${++toolCallCounter}`,
			name: call.name,
			arguments: call.arguments,
		}));
		const answerBytes =
			Buffer.byteLength(text) +
			toolCalls.reduce((sum, call) => sum + Buffer.byteLength(call.name) + Buffer.byteLength(call.arguments), 0);
		return {
			text,
			toolCalls,
			outputTokens: step.outputTokens ?? Math.max(1, Math.floor(answerBytes / 4)),
			stopReason: step.stopReason ?? "stop",
		};
	}

	function sendError(exchange: Exchange, status: number, message: string, headers?: Record<string, string>): void {
		const type = errorType(exchange.request.api, status);
		const body =
			exchange.request.api === "openai"
				? { error: { message, type, param: null, code: status === 429 ? "rate_limit_exceeded" : null } }
				: { type: "error", error: { type, message } };
		sendJson(exchange.response, status, body, headers);
	}

	// ---- OpenAI ----

	function openAIUsage(request: RecordedRequest, answer: Answer): Record<string, unknown> {
		return {
			prompt_tokens: request.promptTokens,
			completion_tokens: answer.outputTokens,
			total_tokens: request.promptTokens + answer.outputTokens,
			prompt_tokens_details: { cached_tokens: request.cachedTokens },
		};
	}

	function openAIFinishReason(answer: Answer): string {
		if (answer.stopReason === "length") return "length";
		return answer.toolCalls.length > 0 ? "tool_calls" : "stop";
	}

	function openAICompletion(exchange: Exchange, answer: Answer): Record<string, unknown> {
		const message: Record<string, unknown> = {
			role: "assistant",
			content: answer.text === "" && answer.toolCalls.length > 0 ? null : answer.text,
			refusal: null,
		};
		if (answer.toolCalls.length > 0) {
			message.tool_calls = answer.toolCalls.map((call) => ({
				id: call.id,
				type: "function",
				function: { name: call.name, arguments: call.arguments },
			}));
		}
		return {
			id: `chatcmpl-fake-${++responseCounter}`,
			object: "chat.completion",
			created: Math.floor(Date.now() / 1000),
			model: exchange.model,
			choices: [{ index: 0, message, logprobs: null, finish_reason: openAIFinishReason(answer) }],
			usage: openAIUsage(exchange.request, answer),
		};
	}

	function openAIChunkMaker(exchange: Exchange): (choices: unknown[], usage?: unknown) => string {
		const id = `chatcmpl-fake-${++responseCounter}`;
		const created = Math.floor(Date.now() / 1000);
		const streamOptions = exchange.request.body.stream_options;
		const includeUsage = isObject(streamOptions) && streamOptions.include_usage === true;
		return (choices, usage) => {
			const chunk: Record<string, unknown> = {
				id,
				object: "chat.completion.chunk",
				created,
				model: exchange.model,
				choices,
			};
			if (includeUsage) chunk.usage = usage ?? null;
			return `data: ${JSON.stringify(chunk)}\n\n`;
		};
	}

	function streamOpenAI(exchange: Exchange, answer: Answer): void {
		const chunk = openAIChunkMaker(exchange);
		const delta = (value: Record<string, unknown>, finishReason: string | null = null) =>
			chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finishReason }]);
		const events = [delta({ role: "assistant", content: "", refusal: null })];
		for (const piece of split(answer.text)) events.push(delta({ content: piece }));
		answer.toolCalls.forEach((call, index) => {
			(call.arguments === "" ? [""] : split(call.arguments)).forEach((piece, number) => {
				const toolCall =
					number === 0
						? { index, id: call.id, type: "function", function: { name: call.name, arguments: piece } }
						: { index, function: { arguments: piece } };
				events.push(delta({ tool_calls: [toolCall] }));
			});
		});
		events.push(delta({}, openAIFinishReason(answer)));
		const streamOptions = exchange.request.body.stream_options;
		if (isObject(streamOptions) && streamOptions.include_usage === true) {
			events.push(chunk([], openAIUsage(exchange.request, answer)));
		}
		events.push("data: [DONE]\n\n");
		sendStream(exchange.response, events);
	}

	// ---- Anthropic ----

	function anthropicUsage(request: RecordedRequest, outputTokens: number): Record<string, unknown> {
		const creation = hasCacheControl(request.body) ? request.promptTokens - request.cachedTokens : 0;
		return {
			input_tokens: request.promptTokens - request.cachedTokens - creation,
			cache_creation_input_tokens: creation,
			cache_read_input_tokens: request.cachedTokens,
			output_tokens: outputTokens,
		};
	}

	function anthropicStopReason(answer: Answer): string {
		if (answer.stopReason === "length") return "max_tokens";
		return answer.toolCalls.length > 0 ? "tool_use" : "end_turn";
	}

	function anthropicMessage(exchange: Exchange, answer: Answer): Record<string, unknown> {
		const content: unknown[] = [];
		if (answer.text !== "" || answer.toolCalls.length === 0) content.push({ type: "text", text: answer.text });
		for (const call of answer.toolCalls) {
			const parsed = parseJson(call.arguments);
			content.push({ type: "tool_use", id: call.id, name: call.name, input: isObject(parsed) ? parsed : {} });
		}
		return {
			id: `msg_fake_${++responseCounter}`,
			type: "message",
			role: "assistant",
			model: exchange.model,
			content,
			stop_reason: anthropicStopReason(answer),
			stop_sequence: null,
			usage: anthropicUsage(exchange.request, answer.outputTokens),
		};
	}

	function anthropicStart(exchange: Exchange): string[] {
		const message = {
			id: `msg_fake_${++responseCounter}`,
			type: "message",
			role: "assistant",
			model: exchange.model,
			content: [],
			stop_reason: null,
			stop_sequence: null,
			usage: anthropicUsage(exchange.request, 1),
		};
		return [sse("message_start", { type: "message_start", message }), sse("ping", { type: "ping" })];
	}

	function streamAnthropic(exchange: Exchange, answer: Answer): void {
		const events = anthropicStart(exchange);
		let index = 0;
		if (answer.text !== "" || answer.toolCalls.length === 0) {
			events.push(textBlockStart(index));
			for (const piece of split(answer.text)) events.push(textDelta(index, piece));
			events.push(sse("content_block_stop", { type: "content_block_stop", index }));
			index++;
		}
		for (const call of answer.toolCalls) {
			const parsed = parseJson(call.arguments);
			const json = isObject(parsed) ? JSON.stringify(parsed) : call.arguments;
			events.push(
				sse("content_block_start", {
					type: "content_block_start",
					index,
					content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
				}),
			);
			for (const piece of split(json)) {
				events.push(
					sse("content_block_delta", {
						type: "content_block_delta",
						index,
						delta: { type: "input_json_delta", partial_json: piece },
					}),
				);
			}
			events.push(sse("content_block_stop", { type: "content_block_stop", index }));
			index++;
		}
		events.push(
			sse("message_delta", {
				type: "message_delta",
				delta: { stop_reason: anthropicStopReason(answer), stop_sequence: null },
				usage: { output_tokens: answer.outputTokens },
			}),
			sse("message_stop", { type: "message_stop" }),
		);
		sendStream(exchange.response, events);
	}

	// ---- cut ----

	/** Sends the headers and the start of an answer (with `text` if any), then destroys the socket. */
	function cut(exchange: Exchange, text: string): void {
		const { request, response } = exchange;
		let start: string;
		if (!request.stream) {
			start = `{"id":"fake-cut","content":${JSON.stringify(text)},`;
		} else if (request.api === "openai") {
			const chunk = openAIChunkMaker(exchange);
			start = chunk([{ index: 0, delta: { role: "assistant", content: text }, logprobs: null, finish_reason: null }]);
		} else {
			start = [...anthropicStart(exchange), textBlockStart(0), ...(text ? [textDelta(0, text)] : [])].join("");
		}
		response.writeHead(200, { "content-type": request.stream ? "text/event-stream" : "application/json" });
		response.write(start, () => response.socket?.destroy());
	}

	const port = await new Promise<number>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
	});
	const url = `http://127.0.0.1:${port}`;
	return {
		url,
		openaiBaseURL: `${url}/v1`,
		anthropicBaseURL: url,
		requests,
		push: (...steps) => {
			script.push(...steps);
		},
		close: () =>
			new Promise<void>((resolve) => {
				for (const timer of timers) clearTimeout(timer);
				timers.clear();
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

// ---- helpers (pure) ----

/**
 * The prompt in the provider's caching order with every `cache_control` key removed:
 * anthropic = tools + system + each message; openai = tools + each message (each JSON.stringify'd, concatenated).
 */
function canonicalPrompt(api: "openai" | "anthropic", body: Record<string, unknown>): string {
	const clean = withoutCacheControl(body) as Record<string, unknown>;
	const messages = Array.isArray(clean.messages) ? clean.messages : [];
	const parts = [JSON.stringify(clean.tools ?? [])];
	if (api === "anthropic") parts.push(JSON.stringify(clean.system ?? ""));
	for (const message of messages) parts.push(JSON.stringify(message));
	return parts.join("");
}

function withoutCacheControl(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutCacheControl);
	if (!isObject(value)) return value;
	const result: Record<string, unknown> = {};
	for (const [key, inner] of Object.entries(value)) {
		if (key !== "cache_control") result[key] = withoutCacheControl(inner);
	}
	return result;
}

function hasCacheControl(value: unknown): boolean {
	if (Array.isArray(value)) return value.some(hasCacheControl);
	if (!isObject(value)) return false;
	return Object.entries(value).some(([key, inner]) => key === "cache_control" || hasCacheControl(inner));
}

function commonPrefixLength(a: Buffer, b: Buffer): number {
	const limit = Math.min(a.length, b.length);
	let index = 0;
	while (index < limit && a[index] === b[index]) index++;
	return index;
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

function parseObject(text: string): Record<string, unknown> {
	const parsed = parseJson(text);
	return isObject(parsed) ? parsed : {};
}

function flattenHeaders(incoming: IncomingMessage): Record<string, string> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(incoming.headers)) {
		if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
	}
	return headers;
}

/** Splits text into up to three pieces on code point boundaries; "" gives no pieces. */
function split(text: string): string[] {
	const points = Array.from(text);
	if (points.length === 0) return [];
	const count = Math.min(3, points.length);
	const size = Math.ceil(points.length / count);
	const pieces: string[] = [];
	for (let start = 0; start < points.length; start += size) pieces.push(points.slice(start, start + size).join(""));
	return pieces;
}

function sse(event: string, data: unknown): string {
	return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function textBlockStart(index: number): string {
	return sse("content_block_start", {
		type: "content_block_start",
		index,
		content_block: { type: "text", text: "" },
	});
}

function textDelta(index: number, text: string): string {
	return sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } });
}

function errorType(api: "openai" | "anthropic", status: number): string {
	const types: Record<number, string> = {
		400: "invalid_request_error",
		401: "authentication_error",
		403: "permission_error",
		404: "not_found_error",
		413: "request_too_large",
		429: "rate_limit_error",
		529: "overloaded_error",
	};
	return types[status] ?? (status >= 500 ? (api === "openai" ? "server_error" : "api_error") : "invalid_request_error");
}

/** True when nothing more can be sent: the client went away or the answer is complete. */
function gone(response: ServerResponse): boolean {
	return response.destroyed || response.writableEnded || response.socket?.destroyed === true;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
	if (gone(response) || response.headersSent) return;
	response.writeHead(status, { "content-type": "application/json", ...headers });
	response.end(JSON.stringify(body));
}

function sendStream(response: ServerResponse, events: string[]): void {
	response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	for (const event of events) response.write(event);
	response.end();
}
