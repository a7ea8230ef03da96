import { RETRYABLE_KINDS } from "./errors.js";
import type { ProviderEvent } from "./types.js";

export interface RetryPolicy {
	/** Total attempts including the first. */
	maxAttempts: number;
	baseDelayMs: number;
	maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000 };

/**
 * Runs `attempt` and retries it with exponential backoff when it ends in a retryable error
 * (rate limit, 5xx, network) before yielding any content. A provider's retry-after wins over the backoff
 * (bounded by maxDelayMs). Each retry is announced with a `retry` event.
 * Contract: never throws; passes every event of the final attempt through unchanged.
 */
export async function* withRetries(
	attempt: () => AsyncIterable<ProviderEvent>,
	policy: RetryPolicy,
	signal?: AbortSignal,
): AsyncIterable<ProviderEvent> {
	for (let number = 1; ; number++) {
		let yieldedContent = false;
		let failure: ProviderEvent | undefined;
		for await (const event of attempt()) {
			if (
				event.type === "error" &&
				!yieldedContent &&
				number < policy.maxAttempts &&
				RETRYABLE_KINDS.has(event.error.kind)
			) {
				failure = event;
				break;
			}
			if (event.type === "text-delta" || event.type === "tool-call-delta" || event.type === "tool-call")
				yieldedContent = true;
			yield event;
		}
		if (failure?.type !== "error") return;
		const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (number - 1));
		const delayMs = Math.min(policy.maxDelayMs, failure.error.retryAfterMs ?? backoff);
		yield { type: "retry", attempt: number + 1, delayMs, reason: failure.error.message };
		const aborted = await sleep(delayMs, signal);
		if (aborted) {
			yield { type: "error", error: { kind: "aborted", message: "aborted while waiting to retry" } };
			return;
		}
	}
}

/** Resolves true if the signal fired before the delay ended. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
	if (signal?.aborted) return Promise.resolve(true);
	return new Promise((resolve) => {
		const timer = setTimeout(() => {
			signal?.removeEventListener("abort", onAbort);
			resolve(false);
		}, ms);
		const onAbort = () => {
			clearTimeout(timer);
			resolve(true);
		};
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}
