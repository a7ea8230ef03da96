// The Anthropic Messages adapter: canonical request → Messages API body, raw SSE events → ProviderEvents.
// Everything Anthropic-specific (wire shapes, cache breakpoints, usage arithmetic, error bodies) stays in this file.

import { Anthropic, AnthropicError, APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type {
	Base64ImageSource,
	CacheControlEphemeral,
	ImageBlockParam,
	MessageCreateParamsNonStreaming,
	MessageCreateParamsStreaming,
	MessageParam,
	RawMessageStreamEvent,
	TextBlockParam,
	Tool,
	ToolResultBlockParam,
	ToolUseBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import { classifyHttpError, oneLine, parseRetryAfter } from "./errors.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, withRetries } from "./retry.js";
import type {
	AssistantMessage,
	Message,
	ModelRequest,
	Provider,
	ProviderError,
	ProviderEvent,
	StopReason,
	StreamOptions,
	ToolCall,
	Usage,
} from "./types.js";

const PROVIDER = "Anthropic";
const KEY_VARIABLE = "ANTHROPIC_API_KEY";
const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

export interface AnthropicProviderOptions {
	model: string;
	/** Default: process.env.ANTHROPIC_API_KEY. */
	apiKey?: string;
	/** Default: process.env.ANTHROPIC_BASE_URL, else the SDK default (https://api.anthropic.com). */
	baseURL?: string;
	/** Default: DEFAULT_RETRY_POLICY. */
	retry?: RetryPolicy;
	/** Anthropic requires max_tokens; used when the request does not say. Default 8192. */
	maxOutputTokens?: number;
	/** "1h" adds ttl:"1h" to every cache_control marker; default "5m" (plain ephemeral). */
	cacheTtl?: "5m" | "1h";
}

export interface AnthropicRequestOptions {
	stream: boolean;
	/** max_tokens when the request carries no maxOutputTokens. */
	maxTokens: number;
	cacheTtl?: "5m" | "1h";
}

/** A content block snowpea sends; every one of them may carry a cache_control marker. */
type WireBlock = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam;

interface WireMessage {
	role: "user" | "assistant";
	content: WireBlock[];
}

/** The fields of an Anthropic response message this adapter reads (the SDK's `Message` fits it). */
export interface AnthropicResponseMessage {
	content: readonly AnthropicResponseBlock[];
	stop_reason?: string | null;
	usage?: unknown;
}

export interface AnthropicResponseBlock {
	type: string;
	text?: string;
	id?: string;
	name?: string;
	input?: unknown;
}

/** The result of one answer in canonical terms. */
export interface AnthropicAnswer {
	message: AssistantMessage;
	stopReason: StopReason;
	usage: Usage;
}

// ---------------------------------------------------------------------------------------------------------------
// Provider

/**
 * The `anthropic:<model>` provider.
 * Contract: never throws, here or in `stream`; a missing key or a client the SDK refuses to build becomes an
 * `error` event of every stream. The SDK never retries (maxRetries 0): `withRetries` does, visible as `retry` events.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
	const apiKey = options.apiKey || process.env.ANTHROPIC_API_KEY || undefined;
	const baseURL = options.baseURL || process.env.ANTHROPIC_BASE_URL || undefined;
	const policy = options.retry ?? DEFAULT_RETRY_POLICY;
	const maxTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
	let client: Anthropic | undefined;
	let setupError: ProviderError | undefined;
	if (!apiKey) {
		// Never fall through to the SDK's own credential chain (profiles, auth tokens): the key is the contract.
		setupError = { kind: "auth", message: `${PROVIDER}: no API key; set ${KEY_VARIABLE} to a valid API key` };
	} else {
		try {
			client = new Anthropic({ apiKey, baseURL, maxRetries: 0 });
		} catch (error) {
			setupError = {
				kind: "auth",
				message: `${PROVIDER}: could not create the client (${describe(error)}); check ${KEY_VARIABLE} and ANTHROPIC_BASE_URL`,
			};
		}
	}

	return {
		name: "anthropic",
		model: options.model,
		stream(request: ModelRequest, streamOptions: StreamOptions = {}): AsyncIterable<ProviderEvent> {
			const signal = streamOptions.signal;
			if (!client) return single({ type: "error", error: setupError ?? unknownError("no client") });
			const ready = client;
			const stream = streamOptions.stream ?? true;
			let body: MessageCreateParamsStreaming | MessageCreateParamsNonStreaming;
			try {
				body = toAnthropicRequest(request, options.model, { stream, maxTokens, cacheTtl: options.cacheTtl });
			} catch (error) {
				return single({ type: "error", error: unknownError(`could not build the request: ${describe(error)}`) });
			}
			const attempt = body.stream
				? () => streamAttempt(ready, body as MessageCreateParamsStreaming, signal)
				: () => completeAttempt(ready, body as MessageCreateParamsNonStreaming, signal);
			return withRetries(attempt, policy, signal);
		},
	};
}

/** One streaming attempt. Contract: never throws; ends with exactly one `done` or `error`. */
async function* streamAttempt(
	client: Anthropic,
	body: MessageCreateParamsStreaming,
	signal: AbortSignal | undefined,
): AsyncIterable<ProviderEvent> {
	if (signal?.aborted) {
		yield { type: "error", error: abortedError() };
		return;
	}
	let events: AsyncIterable<RawMessageStreamEvent>;
	try {
		events = await client.messages.create(body, { signal });
	} catch (error) {
		yield { type: "error", error: classifyError(error, signal, "request") };
		return;
	}
	const assembler = new StreamAssembler();
	try {
		for await (const event of events) {
			yield* assembler.accept(event);
		}
	} catch (error) {
		yield { type: "error", error: classifyError(error, signal, "stream") };
		return;
	}
	if (signal?.aborted) {
		// The SDK ends the iteration quietly when the request is aborted mid-stream.
		yield { type: "error", error: abortedError() };
		return;
	}
	const answer = assembler.finish();
	if ("kind" in answer) {
		yield { type: "error", error: answer };
		return;
	}
	yield { type: "usage", usage: answer.usage };
	yield { type: "done", ...answer };
}

/** One non-streaming attempt. Contract: never throws; yields `usage` then `done`, or one `error`. */
async function* completeAttempt(
	client: Anthropic,
	body: MessageCreateParamsNonStreaming,
	signal: AbortSignal | undefined,
): AsyncIterable<ProviderEvent> {
	if (signal?.aborted) {
		yield { type: "error", error: abortedError() };
		return;
	}
	let response: unknown;
	try {
		response = await client.messages.create(body, { signal });
	} catch (error) {
		yield { type: "error", error: classifyError(error, signal, "request") };
		return;
	}
	if (!isResponseMessage(response)) {
		yield {
			type: "error",
			error: malformed(`the response is not a Messages API message (${oneLine(preview(response), 120)})`),
		};
		return;
	}
	const answer = fromAnthropicMessage(response);
	yield { type: "usage", usage: answer.usage };
	yield { type: "done", ...answer };
}

async function* single(event: ProviderEvent): AsyncIterable<ProviderEvent> {
	yield event;
}

// ---------------------------------------------------------------------------------------------------------------
// Streaming assembly

interface BlockState {
	kind: "text" | "tool" | "other";
	/** Ordinal among the tool calls of this answer (tool blocks only). */
	toolIndex: number;
	id: string;
	name: string;
	/** Concatenated partial_json (tool blocks only). */
	json: string;
	/** The input given in content_block_start, used when no input_json_delta follows. */
	startInput: unknown;
	closed: boolean;
}

/**
 * Assembles raw Messages stream events into ProviderEvents and the final answer.
 * `accept` yields live events in arrival order; `finish` returns the answer or a `malformed` error when the stream
 * never reached message_stop. Never throws.
 */
class StreamAssembler {
	private readonly blocks = new Map<number, BlockState>();
	private readonly calls: ToolCall[] = [];
	private text = "";
	private toolCount = 0;
	private stopReason: string | null = null;
	private usage: Record<string, unknown> = {};
	private started = false;
	private stopped = false;

	*accept(event: RawMessageStreamEvent): Iterable<ProviderEvent> {
		switch (event.type) {
			case "message_start":
				this.started = true;
				this.usage = mergeUsage(this.usage, event.message?.usage);
				return;
			case "content_block_start": {
				const block = event.content_block;
				if (block.type === "text") {
					this.blocks.set(event.index, emptyBlock("text"));
					if (block.text) {
						this.text += block.text;
						yield { type: "text-delta", text: block.text };
					}
				} else if (block.type === "tool_use") {
					const state: BlockState = {
						...emptyBlock("tool"),
						toolIndex: this.toolCount++,
						id: block.id,
						name: block.name,
						startInput: block.input,
					};
					this.blocks.set(event.index, state);
					yield { type: "tool-call-delta", index: state.toolIndex, id: block.id, name: block.name, argumentsDelta: "" };
				} else {
					this.blocks.set(event.index, emptyBlock("other"));
				}
				return;
			}
			case "content_block_delta": {
				const state = this.blocks.get(event.index);
				const delta = event.delta;
				if (delta.type === "text_delta" && state?.kind === "text" && delta.text) {
					this.text += delta.text;
					yield { type: "text-delta", text: delta.text };
				} else if (delta.type === "input_json_delta" && state?.kind === "tool") {
					state.json += delta.partial_json;
					yield { type: "tool-call-delta", index: state.toolIndex, argumentsDelta: delta.partial_json };
				}
				return;
			}
			case "content_block_stop": {
				const state = this.blocks.get(event.index);
				if (state?.kind === "tool" && !state.closed) {
					state.closed = true;
					const call = { id: state.id, name: state.name, arguments: streamedArguments(state) };
					this.calls.push(call);
					yield { type: "tool-call", call };
				}
				return;
			}
			case "message_delta":
				this.stopReason = event.delta?.stop_reason ?? this.stopReason;
				this.usage = mergeUsage(this.usage, event.usage);
				return;
			case "message_stop":
				this.stopped = true;
				return;
		}
	}

	finish(): AnthropicAnswer | ProviderError {
		if (!this.stopped) {
			return malformed(
				this.started
					? "the response stream broke off before message_stop; the answer is incomplete"
					: "the response stream ended without any Messages API event (the body is not an SSE stream)",
			);
		}
		// A tool block the stream never closed still counts: message_stop says the answer is complete.
		for (const state of this.blocks.values()) {
			if (state.kind === "tool" && !state.closed) {
				state.closed = true;
				this.calls.push({ id: state.id, name: state.name, arguments: streamedArguments(state) });
			}
		}
		return {
			message: { role: "assistant", text: this.text, toolCalls: [...this.calls] },
			stopReason: mapStopReason(this.stopReason),
			usage: normalizeAnthropicUsage(this.usage),
		};
	}
}

function emptyBlock(kind: BlockState["kind"]): BlockState {
	return { kind, toolIndex: -1, id: "", name: "", json: "", startInput: undefined, closed: false };
}

function streamedArguments(state: BlockState): string {
	if (state.json.trim() === "" && isPlainObject(state.startInput) && Object.keys(state.startInput).length > 0) {
		return JSON.stringify(state.startInput);
	}
	return canonicalArguments(state.json);
}

/** Later non-null usage fields win (message_delta usage is cumulative). */
function mergeUsage(base: Record<string, unknown>, next: unknown): Record<string, unknown> {
	if (!isPlainObject(next)) return base;
	const merged = { ...base };
	for (const [key, value] of Object.entries(next)) {
		if (value !== null && value !== undefined) merged[key] = value;
		else if (!(key in merged)) merged[key] = value;
	}
	return merged;
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical → wire

/**
 * Translates a canonical request into a Messages API body. Pure and byte-stable: the same input gives the same
 * JSON text. max_tokens is `request.maxOutputTokens`, else `options.maxTokens`.
 * Places at most 4 cache_control markers (see `placeCacheBreakpoints`).
 */
export function toAnthropicRequest(
	request: ModelRequest,
	model: string,
	options: AnthropicRequestOptions & { stream: true },
): MessageCreateParamsStreaming;
export function toAnthropicRequest(
	request: ModelRequest,
	model: string,
	options: AnthropicRequestOptions & { stream: false },
): MessageCreateParamsNonStreaming;
export function toAnthropicRequest(
	request: ModelRequest,
	model: string,
	options: AnthropicRequestOptions,
): MessageCreateParamsStreaming | MessageCreateParamsNonStreaming;
export function toAnthropicRequest(
	request: ModelRequest,
	model: string,
	options: AnthropicRequestOptions,
): MessageCreateParamsStreaming | MessageCreateParamsNonStreaming {
	const control: CacheControlEphemeral =
		options.cacheTtl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };

	const tools: Tool[] = request.tools.map((tool) => ({
		name: tool.name,
		description: tool.description,
		input_schema: tool.parameters as Tool.InputSchema,
	}));

	const system: TextBlockParam[] = [];
	let stableEnd = -1;
	for (const segment of request.system) {
		if (segment.text === "") continue;
		system.push({ type: "text", text: segment.text });
		if (segment.tier !== "volatile") stableEnd = system.length - 1;
	}

	const messages = toWireMessages(request.messages);
	placeCacheBreakpoints(tools, system, stableEnd, messages, control);

	const body = {
		model,
		max_tokens: request.maxOutputTokens ?? options.maxTokens,
		...(system.length > 0 ? { system } : {}),
		...(tools.length > 0 ? { tools } : {}),
		messages: messages as MessageParam[],
		...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
	};
	return options.stream ? { ...body, stream: true } : { ...body, stream: false };
}

/**
 * Canonical messages → alternating Messages API turns.
 * Tool results become tool_result blocks of a user turn; any message whose wire role equals the previous turn's
 * role is merged into that turn (tool results, then an image-carrying user message, become ONE user turn).
 * Messages with no content (an assistant that said nothing and called nothing) are left out.
 */
function toWireMessages(messages: readonly Message[]): WireMessage[] {
	const wire: WireMessage[] = [];
	for (const message of messages) {
		const role = message.role === "assistant" ? "assistant" : "user";
		const blocks = toWireBlocks(message);
		if (blocks.length === 0) continue;
		const last = wire[wire.length - 1];
		if (last && last.role === role) last.content.push(...blocks);
		else wire.push({ role, content: blocks });
	}
	return wire;
}

function toWireBlocks(message: Message): WireBlock[] {
	switch (message.role) {
		case "user":
			return message.content.flatMap((part): WireBlock[] => {
				if (part.type === "image") {
					const source: Base64ImageSource = { type: "base64", media_type: part.mime, data: part.data };
					return [{ type: "image", source }];
				}
				// An image reference the agent did not resolve travels as its marker; Anthropic rejects empty text blocks.
				const text = part.type === "image-ref" ? part.marker : part.text;
				return text === "" ? [] : [{ type: "text", text }];
			});
		case "assistant": {
			const blocks: WireBlock[] = [];
			if (message.text !== "") blocks.push({ type: "text", text: message.text });
			for (const call of message.toolCalls) {
				blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
			}
			return blocks;
		}
		case "tool": {
			const block: ToolResultBlockParam = {
				type: "tool_result",
				tool_use_id: message.toolCallId,
				content: message.content,
			};
			if (message.isError) block.is_error = true;
			return [block];
		}
	}
}

/** The tool_use input for raw arguments: the parsed JSON object, or {} when it is malformed or not an object. */
function toolInput(text: string): Record<string, unknown> {
	try {
		const value: unknown = JSON.parse(text);
		return isPlainObject(value) ? value : {};
	} catch {
		return {};
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Cache breakpoints

/** How far back (in content blocks) Anthropic looks from a breakpoint for an earlier cache entry. */
export const CACHE_LOOKBACK_BLOCKS = 20;

/**
 * Where the second message breakpoint sits: this many blocks before the end of the messages.
 *
 * Why not quantize (a breakpoint on the last multiple of 10 blocks)? Take a request of N blocks with breakpoints
 * at prefix lengths N and q(N), and a successor that adds d blocks. The successor's last breakpoint (at N + d)
 * reaches the predecessor's entry at N only while d ≤ 20. For 20 < d ≤ 30 a quantized breakpoint can land up to 29
 * blocks after N (N = 11, d = 30: breakpoints 41 and 40 against entries at 11 and 10) and miss everything.
 * A breakpoint a fixed K blocks before the end instead sits at N + d − K, which is within [N, N + 20] for every
 * K ≤ d ≤ K + 20. With the last-block breakpoint covering 0 ≤ d ≤ 20, K = 15 covers every growth up to 35 blocks
 * (≈ 17 parallel tool calls per round) and keeps working even if the real lookback were as short as 15 blocks.
 * It depends only on the messages, so it is as deterministic as quantizing.
 */
export const TRAILING_BREAKPOINT_OFFSET = 15;

/**
 * Sets cache_control markers in place, never more than 4:
 * 1. the last tool definition;
 * 2. the last non-volatile system block (`stableEnd`, −1 when there is none);
 * 3. the last content block of the last message;
 * 4. the block TRAILING_BREAKPOINT_OFFSET blocks before the end of the messages (prefix length N − 15), when the
 *    messages hold more than that many blocks, so a round that adds up to 35 blocks still finds the previous
 *    request's entry within the 20-block lookback.
 */
function placeCacheBreakpoints(
	tools: Tool[],
	system: TextBlockParam[],
	stableEnd: number,
	messages: WireMessage[],
	control: CacheControlEphemeral,
): void {
	const lastTool = tools[tools.length - 1];
	if (lastTool) lastTool.cache_control = { ...control };
	const stableBlock = system[stableEnd];
	if (stableBlock) stableBlock.cache_control = { ...control };

	const blocks = messages.flatMap((message) => message.content);
	for (const position of messageBreakpointPositions(blocks.length)) {
		const block = blocks[position - 1];
		if (block) block.cache_control = { ...control };
	}
}

/**
 * The message breakpoints for messages of `total` content blocks, as prefix lengths (a breakpoint at prefix length
 * p marks block p − 1). At most two; ascending. Pure: exported for tests and the bench.
 */
export function messageBreakpointPositions(total: number): number[] {
	if (total <= 0) return [];
	const trailing = total - TRAILING_BREAKPOINT_OFFSET;
	return trailing >= 1 ? [trailing, total] : [total];
}

/** Counts cache_control markers anywhere in a request body (tools, system, messages, nested blocks). */
export function countCacheBreakpoints(wire: unknown): number {
	if (Array.isArray(wire)) return wire.reduce((sum: number, item) => sum + countCacheBreakpoints(item), 0);
	if (!isPlainObject(wire)) return 0;
	let count = 0;
	for (const [key, value] of Object.entries(wire)) {
		if (key === "cache_control") count += value === null || value === undefined ? 0 : 1;
		else count += countCacheBreakpoints(value);
	}
	return count;
}

// ---------------------------------------------------------------------------------------------------------------
// Wire → canonical

/**
 * A complete (non-streaming) Messages API answer in canonical terms: text blocks concatenated, tool_use blocks as
 * tool calls with canonical JSON arguments, other block kinds (thinking, server tools) ignored. Never throws.
 */
export function fromAnthropicMessage(message: AnthropicResponseMessage): AnthropicAnswer {
	let text = "";
	const toolCalls: ToolCall[] = [];
	for (const block of message.content) {
		if (block.type === "text" && typeof block.text === "string") text += block.text;
		else if (block.type === "tool_use") {
			toolCalls.push({
				id: String(block.id ?? ""),
				name: String(block.name ?? ""),
				arguments: canonicalArguments(JSON.stringify(block.input ?? {})),
			});
		}
	}
	return {
		message: { role: "assistant", text, toolCalls },
		stopReason: mapStopReason(message.stop_reason ?? null),
		usage: normalizeAnthropicUsage(message.usage),
	};
}

/**
 * Tool-call arguments in one canonical text, whichever way they arrived: the JSON re-serialized when it parses
 * ("{}" when empty), else the text unchanged so the agent loop can report it as malformed.
 */
export function canonicalArguments(text: string): string {
	if (text.trim() === "") return "{}";
	try {
		return JSON.stringify(JSON.parse(text));
	} catch {
		return text;
	}
}

/**
 * Anthropic usage → Usage. Anthropic's input_tokens EXCLUDES cache reads and writes; `input` here is the whole
 * prompt (input_tokens + cache reads + cache writes). Missing or null figures count 0. `raw` is the object as
 * received. Never throws.
 */
export function normalizeAnthropicUsage(raw: unknown): Usage {
	const fields = isPlainObject(raw) ? raw : {};
	const cacheRead = count(fields.cache_read_input_tokens);
	const cacheWrite = count(fields.cache_creation_input_tokens);
	return {
		input: count(fields.input_tokens) + cacheRead + cacheWrite,
		output: count(fields.output_tokens),
		cacheRead,
		cacheWrite,
		raw: { ...fields },
	};
}

/** Anthropic stop_reason → StopReason; unknown or missing reasons count as "stop". */
export function mapStopReason(reason: string | null): StopReason {
	switch (reason) {
		case "tool_use":
			return "tool_calls";
		case "max_tokens":
		case "model_context_window_exceeded":
			return "length";
		case "refusal":
			return "content_filter";
		default:
			// end_turn, stop_sequence, pause_turn
			return "stop";
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** Anthropic's error types (in SSE `error` events, which carry no HTTP status) and the status they stand for. */
const ERROR_TYPE_STATUS: Record<string, number> = {
	invalid_request_error: 400,
	authentication_error: 401,
	permission_error: 403,
	not_found_error: 404,
	request_too_large: 413,
	rate_limit_error: 429,
	api_error: 500,
	overloaded_error: 529,
};

/**
 * Any failure of a request or its stream → ProviderError. `phase` tells a failure before the response ("request")
 * from one while reading the stream ("stream"): an unexplained failure mid-stream means the answer was cut off.
 */
function classifyError(error: unknown, signal: AbortSignal | undefined, phase: "request" | "stream"): ProviderError {
	if (signal?.aborted || error instanceof APIUserAbortError || isAbortError(error)) return abortedError();
	if (error instanceof APIConnectionError) {
		return { kind: "network", message: `${PROVIDER}: could not reach the API (${describeConnection(error)})` };
	}
	if (error instanceof APIError) {
		// The SDK prefixes its own message with the status ("400 <body>"); the classified message says it already.
		const detail = error.apiMessage ?? error.message.replace(/^\d{3} /, "");
		if (typeof error.status === "number") {
			return classifyHttpError(PROVIDER, error.status, detail, KEY_VARIABLE, parseRetryAfter(error.headers));
		}
		// An `error` event inside an SSE stream: no status, but the body names the error type.
		const status = ERROR_TYPE_STATUS[error.type ?? ""];
		if (status === undefined) return malformed(`the stream reported an error: ${oneLine(detail)}`);
		const { status: _synthetic, ...classified } = classifyHttpError(PROVIDER, status, detail, KEY_VARIABLE);
		return { ...classified, message: `${classified.message} (reported mid-stream)` };
	}
	if (error instanceof SyntaxError) return malformed(`the response body is not valid JSON (${oneLine(error.message)})`);
	if (phase === "stream") return malformed(`the response stream broke off mid-answer (${describe(error)})`);
	// The SDK refusing a request before sending it (e.g. non-streaming with a huge max_tokens).
	if (error instanceof AnthropicError) return unknownError(describe(error));
	// Anything else failed while reading the response body (fetch failures are APIConnectionErrors).
	return malformed(`the response broke off before it was complete (${describe(error)})`);
}

function describeConnection(error: APIConnectionError): string {
	const cause = error.cause instanceof Error ? error.cause : undefined;
	const inner = cause?.cause instanceof Error ? cause.cause : undefined;
	return oneLine([error.message, cause?.message, inner?.message].filter(Boolean).join(": "), 200);
}

function isAbortError(error: unknown): boolean {
	return error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError");
}

function abortedError(): ProviderError {
	return { kind: "aborted", message: `${PROVIDER}: the request was aborted` };
}

function malformed(message: string): ProviderError {
	return { kind: "malformed", message: `${PROVIDER}: ${message}` };
}

function unknownError(message: string): ProviderError {
	return { kind: "unknown", message: `${PROVIDER}: ${message}` };
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isResponseMessage(value: unknown): value is AnthropicResponseMessage {
	return isPlainObject(value) && Array.isArray(value.content);
}

function count(value: unknown): number {
	return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function describe(error: unknown): string {
	return oneLine(error instanceof Error ? error.message : String(error), 200);
}

function preview(value: unknown): string {
	if (typeof value === "string") return value;
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}
