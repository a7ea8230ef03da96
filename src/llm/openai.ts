import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type {
	ChatCompletion,
	ChatCompletionAssistantMessageParam,
	ChatCompletionChunk,
	ChatCompletionContentPart,
	ChatCompletionCreateParams,
	ChatCompletionCreateParamsBase,
	ChatCompletionCreateParamsNonStreaming,
	ChatCompletionCreateParamsStreaming,
	ChatCompletionMessageFunctionToolCall,
	ChatCompletionMessageParam,
	ChatCompletionTool,
} from "openai/resources/chat/completions";
import { classifyHttpError, isContextLengthMessage, oneLine, parseRetryAfter } from "./errors.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, withRetries } from "./retry.js";
import {
	type AssistantMessage,
	type ContentPart,
	emptyUsage,
	type Message,
	type ModelRequest,
	type Provider,
	type ProviderError,
	type ProviderEvent,
	type StopReason,
	type StreamOptions,
	type ToolCall,
	type Usage,
} from "./types.js";

const PROVIDER = "OpenAI";
const KEY_VARIABLE = "OPENAI_API_KEY";

export interface OpenAIProviderOptions {
	model: string;
	/** Default process.env.OPENAI_API_KEY; "not-set" when absent (local servers accept any key). */
	apiKey?: string;
	/** Default process.env.OPENAI_BASE_URL, else the SDK default (https://api.openai.com/v1). */
	baseURL?: string;
	/** Default DEFAULT_RETRY_POLICY. */
	retry?: RetryPolicy;
	/** Sent as `max_tokens` when a request does not set its own maxOutputTokens; nothing is sent when both are absent. */
	maxOutputTokens?: number;
}

/**
 * A Chat Completions provider (`openai:<model>`) for OpenAI and OpenAI-compatible servers
 * (OpenRouter, DeepSeek, vLLM, Ollama, llama.cpp). Retries are ours (`retry` events), never the SDK's.
 * Contract: `stream` never throws; it ends with exactly one `done` or `error` event.
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): Provider {
	const client = new OpenAI({
		apiKey: options.apiKey || process.env.OPENAI_API_KEY || "not-set",
		baseURL: options.baseURL || process.env.OPENAI_BASE_URL || undefined,
		maxRetries: 0,
		// Failures reach the caller as events; the SDK's own console logging would only duplicate them.
		logLevel: process.env.OPENAI_LOG ? undefined : "off",
	});
	const policy = options.retry ?? DEFAULT_RETRY_POLICY;
	return {
		name: "openai",
		model: options.model,
		stream(request: ModelRequest, streamOptions: StreamOptions = {}): AsyncIterable<ProviderEvent> {
			const effective: ModelRequest =
				request.maxOutputTokens === undefined && options.maxOutputTokens !== undefined
					? { ...request, maxOutputTokens: options.maxOutputTokens }
					: request;
			const signal = streamOptions.signal;
			const attempt =
				streamOptions.stream === false
					? () =>
							completeOnce(
								client,
								toOpenAIRequest(effective, options.model, { stream: false, ...session(streamOptions) }),
								signal,
							)
					: () =>
							streamOnce(
								client,
								toOpenAIRequest(effective, options.model, { stream: true, ...session(streamOptions) }),
								signal,
							);
			return neverThrows(withRetries(attempt, policy, signal));
		},
	};
}

/** Last line of defence for the never-throws contract: an unexpected exception becomes an `unknown` error event. */
async function* neverThrows(events: AsyncIterable<ProviderEvent>): AsyncGenerator<ProviderEvent> {
	try {
		yield* events;
	} catch (error) {
		const reason = error instanceof Error ? error.message : String(error);
		yield { type: "error", error: { kind: "unknown", message: `${PROVIDER}: ${oneLine(reason)}` } };
	}
}

function session(options: StreamOptions): { sessionId?: string } {
	return options.sessionId === undefined ? {} : { sessionId: options.sessionId };
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical → wire

/**
 * Translates a canonical request into a Chat Completions body. Pure and byte-stable: the same input always
 * serializes to the same JSON. System segments become one system message (texts joined with "\n\n", empty
 * segments skipped); `tools` is omitted when there are none; `max_tokens` is sent only when maxOutputTokens is set;
 * `prompt_cache_key` only when a sessionId is given.
 */
export function toOpenAIRequest(
	request: ModelRequest,
	model: string,
	options: { stream: true; sessionId?: string },
): ChatCompletionCreateParamsStreaming;
export function toOpenAIRequest(
	request: ModelRequest,
	model: string,
	options: { stream: false; sessionId?: string },
): ChatCompletionCreateParamsNonStreaming;
export function toOpenAIRequest(
	request: ModelRequest,
	model: string,
	options: { stream: boolean; sessionId?: string },
): ChatCompletionCreateParams;
export function toOpenAIRequest(
	request: ModelRequest,
	model: string,
	options: { stream: boolean; sessionId?: string },
): ChatCompletionCreateParams {
	const messages: ChatCompletionMessageParam[] = [];
	const system = request.system
		.map((segment) => segment.text)
		.filter((text) => text !== "")
		.join("\n\n");
	if (system !== "") messages.push({ role: "system", content: system });
	for (const message of request.messages) messages.push(toWireMessage(message));

	const body: ChatCompletionCreateParamsBase = { model, messages };
	if (request.tools.length > 0) {
		body.tools = request.tools.map(
			(tool): ChatCompletionTool => ({
				type: "function",
				function: { name: tool.name, description: tool.description, parameters: tool.parameters },
			}),
		);
	}
	if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens;
	if (request.temperature !== undefined) body.temperature = request.temperature;
	if (options.stream) {
		body.stream = true;
		body.stream_options = { include_usage: true };
	}
	if (options.sessionId !== undefined) body.prompt_cache_key = options.sessionId;
	return body as ChatCompletionCreateParams;
}

function toWireMessage(message: Message): ChatCompletionMessageParam {
	switch (message.role) {
		case "user":
			return { role: "user", content: toWireUserContent(message.content) };
		case "assistant": {
			const wire: ChatCompletionAssistantMessageParam = { role: "assistant", content: message.text || null };
			if (message.toolCalls.length > 0) {
				wire.tool_calls = message.toolCalls.map(
					(call): ChatCompletionMessageFunctionToolCall => ({
						id: call.id,
						type: "function",
						function: { name: call.name, arguments: call.arguments },
					}),
				);
			}
			return wire;
		}
		case "tool":
			return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
	}
}

function toWireUserContent(parts: ContentPart[]): string | ChatCompletionContentPart[] {
	const [first] = parts;
	if (parts.length === 0) return "";
	if (parts.length === 1 && first?.type === "text") return first.text;
	return parts.map((part): ChatCompletionContentPart => {
		if (part.type === "text") return { type: "text", text: part.text };
		// an image reference the agent did not resolve travels as its marker
		if (part.type === "image-ref") return { type: "text", text: part.marker };
		return { type: "image_url", image_url: { url: `data:${part.mime};base64,${part.data}` } };
	});
}

// ---------------------------------------------------------------------------------------------------------------
// Wire → canonical

/**
 * Translates a non-streaming completion (its first choice) into the canonical answer. Never throws.
 * Text is the message content (a refusal counts as text); tool calls keep the order the model gave them, an empty
 * `arguments` becomes "{}" and a missing id becomes "call_<index>". A completion without choices yields an empty
 * message with stopReason "error".
 */
export function fromOpenAICompletion(completion: ChatCompletion): {
	message: AssistantMessage;
	stopReason: StopReason;
	usage: Usage;
} {
	const usage = normalizeOpenAIUsage(completion.usage);
	const choice = completion.choices?.[0];
	if (!choice) return { message: { role: "assistant", text: "", toolCalls: [] }, stopReason: "error", usage };
	const wire = choice.message;
	const text = (wire?.content ?? "") + (wire?.refusal ?? "");
	const toolCalls: ToolCall[] = [];
	for (const [index, call] of (wire?.tool_calls ?? []).entries()) {
		if (call.type === "custom") continue;
		toolCalls.push(canonicalCall(index, call.id, call.function?.name, call.function?.arguments));
	}
	return {
		message: { role: "assistant", text, toolCalls },
		stopReason: toStopReason(choice.finish_reason, toolCalls.length > 0),
		usage,
	};
}

function canonicalCall(
	index: number,
	id: string | undefined | null,
	name: string | undefined | null,
	args: string | undefined | null,
): ToolCall {
	return { id: id || `call_${index}`, name: name ?? "", arguments: args || "{}" };
}

/**
 * Maps finish_reason to a StopReason: stop→"stop", tool_calls/function_call→"tool_calls", length→"length",
 * content_filter→"content_filter". When the answer carries tool calls, "stop" and unknown reasons become
 * "tool_calls" (some compatible servers say "stop" after a tool call).
 */
function toStopReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
	switch (reason) {
		case "tool_calls":
		case "function_call":
			return "tool_calls";
		case "length":
			return "length";
		case "content_filter":
			return "content_filter";
		default:
			return hasToolCalls ? "tool_calls" : "stop";
	}
}

/**
 * Normalizes a Chat Completions `usage` object. Never throws; anything that is not an object gives zeros.
 * input = prompt_tokens; cacheRead = prompt_tokens_details.cached_tokens, else DeepSeek's prompt_cache_hit_tokens,
 * else 0 (a subset of input); cacheWrite = 0; output = completion_tokens; raw = the object as received.
 */
export function normalizeOpenAIUsage(raw: unknown): Usage {
	if (!isRecord(raw)) return emptyUsage();
	const details = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
	return {
		input: count(raw.prompt_tokens) ?? 0,
		output: count(raw.completion_tokens) ?? 0,
		cacheRead: count(details.cached_tokens) ?? count(raw.prompt_cache_hit_tokens) ?? 0,
		cacheWrite: 0,
		raw,
	};
}

function count(value: unknown): number | undefined {
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------------------------
// One attempt (never throws)

async function* completeOnce(
	client: OpenAI,
	body: ChatCompletionCreateParamsNonStreaming,
	signal: AbortSignal | undefined,
): AsyncGenerator<ProviderEvent> {
	let completion: unknown;
	try {
		completion = await client.chat.completions.create(body, { signal });
	} catch (error) {
		yield { type: "error", error: toProviderError(error, signal, client.baseURL) };
		return;
	}
	if (signal?.aborted) {
		yield { type: "error", error: abortedError() };
		return;
	}
	const problem = completionProblem(completion);
	if (problem) {
		yield { type: "error", error: { kind: "malformed", message: `${PROVIDER}: ${problem}` } };
		return;
	}
	const { message, stopReason, usage } = fromOpenAICompletion(completion as ChatCompletion);
	if (message.text !== "") yield { type: "text-delta", text: message.text };
	for (const call of message.toolCalls) yield { type: "tool-call", call };
	if (isRecord((completion as ChatCompletion).usage)) yield { type: "usage", usage };
	yield { type: "done", message, stopReason, usage };
}

/** Why a non-streaming body cannot be a completion, or undefined when it looks like one. */
function completionProblem(completion: unknown): string | undefined {
	if (!isRecord(completion)) {
		const preview = typeof completion === "string" ? ` (${oneLine(completion, 80)})` : "";
		return `the response body is not a JSON chat completion${preview}`;
	}
	if (!Array.isArray(completion.choices) || completion.choices.length === 0) return "the response has no choices";
	const [choice] = completion.choices;
	if (!isRecord(choice) || !isRecord(choice.message)) return "the response's first choice has no message";
	return undefined;
}

interface PartialCall {
	id: string;
	name: string;
	arguments: string;
}

async function* streamOnce(
	client: OpenAI,
	body: ChatCompletionCreateParamsStreaming,
	signal: AbortSignal | undefined,
): AsyncGenerator<ProviderEvent> {
	let text = "";
	const calls = new Map<number, PartialCall>();
	let lastIndex = -1;
	let finishReason: string | undefined;
	let rawUsage: unknown;
	try {
		const stream = await client.chat.completions.create(body, { signal });
		for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
			if (!isRecord(chunk)) continue;
			if (isRecord(chunk.usage)) rawUsage = chunk.usage;
			const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
			if (!choice) continue;
			const delta = choice.delta ?? {};
			const piece = (delta.content ?? "") + (delta.refusal ?? "");
			if (piece !== "") {
				text += piece;
				yield { type: "text-delta", text: piece };
			}
			for (const wire of delta.tool_calls ?? []) {
				const index = indexOf(wire, calls, lastIndex);
				lastIndex = index;
				let call = calls.get(index);
				if (!call) {
					call = { id: "", name: "", arguments: "" };
					calls.set(index, call);
				}
				if (wire.id && !call.id) call.id = wire.id;
				const name = wire.function?.name;
				if (name && !call.name) call.name = name;
				const argumentsDelta = wire.function?.arguments ?? "";
				call.arguments += argumentsDelta;
				const event: ProviderEvent = { type: "tool-call-delta", index, argumentsDelta };
				if (wire.id) event.id = wire.id;
				if (name) event.name = name;
				yield event;
			}
			if (choice.finish_reason) finishReason = choice.finish_reason;
		}
	} catch (error) {
		yield { type: "error", error: toProviderError(error, signal, client.baseURL, true) };
		return;
	}
	// The SDK ends the iteration quietly when the signal fires mid-stream.
	if (signal?.aborted) {
		yield { type: "error", error: abortedError() };
		return;
	}
	if (finishReason === undefined) {
		yield {
			type: "error",
			error: {
				kind: "malformed",
				message: `${PROVIDER}: the response stream ended before the answer finished (no finish_reason); the connection was cut or the server is not speaking Chat Completions`,
			},
		};
		return;
	}
	const toolCalls = [...calls.entries()]
		.sort(([left], [right]) => left - right)
		.map(([index, call]) => canonicalCall(index, call.id, call.name, call.arguments));
	for (const call of toolCalls) yield { type: "tool-call", call };
	const usage = normalizeOpenAIUsage(rawUsage);
	if (rawUsage !== undefined) yield { type: "usage", usage };
	yield {
		type: "done",
		message: { role: "assistant", text, toolCalls },
		stopReason: toStopReason(finishReason, toolCalls.length > 0),
		usage,
	};
}

/** The call a tool-call piece belongs to; tolerates servers that omit `index`. */
function indexOf(wire: ChatCompletionChunk.Choice.Delta.ToolCall, calls: Map<number, PartialCall>, lastIndex: number) {
	if (typeof wire.index === "number") return wire.index;
	if (lastIndex < 0) return 0;
	if (wire.id && calls.get(lastIndex)?.id && calls.get(lastIndex)?.id !== wire.id) return lastIndex + 1;
	return lastIndex;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors as data

function abortedError(): ProviderError {
	return { kind: "aborted", message: `${PROVIDER}: the request was aborted` };
}

/** Turns anything the SDK throws into a ProviderError. `midStream` marks failures after the response began. */
function toProviderError(
	error: unknown,
	signal: AbortSignal | undefined,
	baseURL: string,
	midStream = false,
): ProviderError {
	if (signal?.aborted || error instanceof APIUserAbortError) return abortedError();
	if (error instanceof APIConnectionTimeoutError) {
		return { kind: "network", message: `${PROVIDER}: the request to ${baseURL} timed out` };
	}
	if (error instanceof APIConnectionError) {
		const cause = error.cause instanceof Error ? `: ${causeText(error.cause)}` : "";
		return { kind: "network", message: `${PROVIDER}: could not connect to ${baseURL}${oneLine(cause)}` };
	}
	if (error instanceof APIError) {
		const detail = errorDetail(error);
		if (typeof error.status === "number") {
			return classifyHttpError(PROVIDER, error.status, detail, KEY_VARIABLE, parseRetryAfter(error.headers));
		}
		// An error object sent inside a 200 stream (OpenRouter and others): its code is often the HTTP status.
		const code = Number(error.code);
		if (Number.isInteger(code) && code >= 400 && code < 600) {
			return classifyHttpError(PROVIDER, code, detail, KEY_VARIABLE);
		}
		if (isContextLengthMessage(detail)) return classifyHttpError(PROVIDER, 400, detail, KEY_VARIABLE);
		return { kind: "server", message: `${PROVIDER}: the server reported an error — ${oneLine(detail)}` };
	}
	if (error instanceof SyntaxError) {
		return { kind: "malformed", message: `${PROVIDER}: the response was not valid JSON (${oneLine(error.message)})` };
	}
	const reason = error instanceof Error ? causeText(error) : String(error);
	return {
		kind: "malformed",
		message: midStream
			? `${PROVIDER}: the response stream was cut before the answer finished (${oneLine(reason)})`
			: `${PROVIDER}: the response could not be read (${oneLine(reason)})`,
	};
}

/** The provider's own words: the error body's message, else the SDK message without its status prefix. */
function errorDetail(error: APIError): string {
	const body = error.error;
	if (isRecord(body) && typeof body.message === "string") return body.message;
	const message = error.message.replace(/^\d{3} /, "");
	return message === "status code (no body)" ? "" : message;
}

function causeText(error: Error): string {
	const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
	return `${error.message}${cause}`;
}
