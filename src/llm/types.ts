// The one message vocabulary used everywhere inside snowpea.
// Provider adapters translate these types to and from a wire format; nothing else knows a wire format.

/** Plain text content. */
export interface TextPart {
	type: "text";
	text: string;
}

/** The image types snowpea accepts; always sniffed from magic bytes, never from a name. */
export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** An image ready to send: base64 bytes (no data: prefix). */
export interface ImagePart {
	type: "image";
	mime: ImageMime;
	data: string;
}

/**
 * An image as the transcript keeps it: a reference to a file in the session's attachment store, never base64.
 * The agent turns it into an ImagePart (reading the bytes again) or into its text marker for each request;
 * adapters that meet one send the marker as text.
 */
export interface ImageRefPart {
	type: "image-ref";
	ref: ImageRef;
	/** Short text standing for the image where it cannot be sent, e.g. "[image: shot.png 1280×800 image/png (210 KB)]". */
	marker: string;
}

/** A stored image: the attachment store's downscaled copy (the user's file is never rewritten). */
export interface ImageRef {
	name: string;
	mime: ImageMime;
	/** Bytes of the stored copy. */
	bytes: number;
	sha256: string;
	/** Absolute path of the stored copy. */
	path: string;
	width: number;
	height: number;
}

export type ContentPart = TextPart | ImagePart | ImageRefPart;

/**
 * A call the model asked for. `arguments` is the raw JSON text exactly as the model produced it:
 * it may be malformed, and the agent loop (not the adapter) decides what to do about that.
 */
export interface ToolCall {
	id: string;
	name: string;
	arguments: string;
}

export interface UserMessage {
	role: "user";
	content: ContentPart[];
}

export interface AssistantMessage {
	role: "assistant";
	/** The visible answer text; "" when the model only called tools. */
	text: string;
	toolCalls: ToolCall[];
}

/** The answer to one tool call. Always text: images travel in a following user message. */
export interface ToolResultMessage {
	role: "tool";
	toolCallId: string;
	toolName: string;
	content: string;
	isError: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * The system prompt in tiers, ordered stable → context → volatile.
 * Adapters place a provider cache breakpoint after the last non-volatile segment.
 */
export interface SystemSegment {
	tier: "stable" | "context" | "volatile";
	text: string;
}

/** A tool as the model sees it. `parameters` is a JSON Schema object. */
export interface ToolDefinition {
	name: string;
	description: string;
	parameters: Record<string, unknown>;
}

/** One request to a model: everything the provider will see. */
export interface ModelRequest {
	system: SystemSegment[];
	tools: ToolDefinition[];
	messages: Message[];
	/** Upper bound on output tokens; the adapter picks a model default when absent. */
	maxOutputTokens?: number;
	temperature?: number;
}

/**
 * Token usage of one response, normalized across providers.
 * - input: every prompt token the provider processed, cached or not (cacheRead and cacheWrite are subsets of it).
 * - cacheRead: prompt tokens served from the provider's prefix cache.
 * - cacheWrite: prompt tokens written to the cache by this request (Anthropic only; 0 elsewhere).
 * - output: generated tokens.
 * - raw: the provider's own usage fields, untouched.
 */
export interface Usage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	raw: Record<string, unknown>;
}

/** Why a response ended. */
export type StopReason = "stop" | "tool_calls" | "length" | "content_filter" | "aborted" | "error";

/** What went wrong, as data. `kind` decides what the caller does next. */
export type ProviderErrorKind =
	| "auth" // 401/403: a key is missing or wrong
	| "rate_limit" // 429 after retries
	| "server" // 5xx after retries
	| "network" // connection failed after retries
	| "context_length" // the prompt does not fit the model's window: compact and retry
	| "bad_request" // any other 4xx
	| "malformed" // a non-JSON body, or a stream cut in the middle
	| "aborted" // the caller's signal fired
	| "unknown";

export interface ProviderError {
	kind: ProviderErrorKind;
	/** One line a person can act on. */
	message: string;
	status?: number;
	/** Milliseconds the provider asked us to wait (retry-after), when it said. */
	retryAfterMs?: number;
}

/**
 * Events a provider stream yields, in order. The stream ends with exactly one `done` or `error` event.
 * `tool-call-delta` and `text-delta` are for live display only: `done.message` is the complete, authoritative result.
 */
export type ProviderEvent =
	| { type: "text-delta"; text: string }
	| { type: "tool-call-delta"; index: number; id?: string; name?: string; argumentsDelta: string }
	| { type: "tool-call"; call: ToolCall }
	| { type: "usage"; usage: Usage }
	| { type: "retry"; attempt: number; delayMs: number; reason: string }
	| { type: "done"; message: AssistantMessage; stopReason: StopReason; usage: Usage }
	| { type: "error"; error: ProviderError };

export interface StreamOptions {
	signal?: AbortSignal;
	/** Used as the provider's cache key where supported (OpenAI `prompt_cache_key`). */
	sessionId?: string;
	/** Stream the response (default true). */
	stream?: boolean;
}

/**
 * A model behind one provider.
 * Contract: `stream` never throws and never rejects; every failure becomes a final `error` event.
 */
export interface Provider {
	/** "openai" | "anthropic". */
	readonly name: string;
	readonly model: string;
	stream(request: ModelRequest, options?: StreamOptions): AsyncIterable<ProviderEvent>;
}

/** Usage with every count zero. */
export function emptyUsage(): Usage {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, raw: {} };
}
