import type { ProviderError, ProviderErrorKind } from "./types.js";

/** Error kinds worth another attempt after a pause. */
export const RETRYABLE_KINDS: ReadonlySet<ProviderErrorKind> = new Set(["rate_limit", "server", "network"]);

// Phrases providers use when the prompt does not fit the window. Checked case-insensitively.
const CONTEXT_LENGTH_PATTERNS = [
	/context[_ ]length[_ ]exceeded/i,
	/maximum context length/i,
	/prompt is too long/i,
	/context window/i,
	/too many tokens/i,
	/input is too long/i,
	/exceeds? the (model'?s? )?(maximum|max) (context|input)/i,
	/reduce the length of the messages/i,
];

/** True when a provider's error text says the prompt is larger than the model's window. */
export function isContextLengthMessage(text: string): boolean {
	return CONTEXT_LENGTH_PATTERNS.some((pattern) => pattern.test(text));
}

/** Parses a retry-after header (seconds or HTTP date) or retry-after-ms into milliseconds. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined): number | undefined {
	if (!headers) return undefined;
	const ms = headers.get("retry-after-ms");
	if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
	const value = headers.get("retry-after");
	if (!value) return undefined;
	if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * Classifies an HTTP failure into a ProviderError with a one-line message.
 * `keyVariable` names the environment variable a person should set on 401/403.
 */
export function classifyHttpError(
	provider: string,
	status: number,
	detail: string,
	keyVariable: string,
	retryAfterMs?: number,
): ProviderError {
	const text = oneLine(detail);
	if (status === 401 || status === 403) {
		return {
			kind: "auth",
			status,
			message: `${provider} rejected the request (${status}${text ? `: ${text}` : ""}); set ${keyVariable} to a valid API key`,
		};
	}
	const kind: ProviderErrorKind =
		status === 429
			? "rate_limit"
			: status >= 500
				? "server"
				: isContextLengthMessage(text)
					? "context_length"
					: "bad_request";
	const label = kind === "context_length" ? "the prompt is larger than the model's context window" : `HTTP ${status}`;
	return {
		kind,
		status,
		retryAfterMs,
		message: `${provider}: ${label}${text ? ` — ${text}` : ""}`,
	};
}

/** Collapses whitespace and clips to one readable line. */
export function oneLine(text: string, max = 300): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
