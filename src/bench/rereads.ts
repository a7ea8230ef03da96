import type { Entry } from "../context/ledger.js";
import type { ReplayContext } from "./replay.js";

// Recall says what a request no longer showed; this prices what getting it back would have cost. The agent's actions
// are held fixed, so the estimate is a model, not a replay: when a request misses a token the agent used, the agent
// is assumed to have read the entry that held it once more — one call (REREAD_CALL_TOKENS of output), the entry's
// original tokens written to the cache (or sent uncached where writes are not charged), then read from the cache by
// the next REREAD_CARRY requests until it turned stale again. Each entry is re-read at most once per run.

/** Output tokens of the tool call that reads an entry again. */
export const REREAD_CALL_TOKENS = 30;
/** Requests a re-read result is carried before it is stale again (about the rounds "auto" keeps). */
export const REREAD_CARRY = 5;

/** Re-read costs of one policy over one run, request by request. */
export class RereadEstimate {
	readonly #done = new Set<number>();

	constructor(private readonly context: ReplayContext) {}

	/** USD the entries in `missing` not re-read before would have cost to read again at request `request` (1-based). */
	price(request: number, missing: readonly number[]): number {
		const { sheet, trajectory } = this.context;
		const remaining = trajectory.assistants.length - request;
		const write = sheet.explicitWrites ? sheet.cacheWriteMultiplier : 1;
		let tokens = 0;
		let calls = 0;
		for (const entry of missing) {
			if (this.#done.has(entry)) continue;
			this.#done.add(entry);
			tokens += this.tokensOf(trajectory.entries[entry]);
			calls++;
		}
		const input = tokens * (write + sheet.cacheReadMultiplier * Math.min(REREAD_CARRY, remaining));
		return (input * sheet.input + calls * REREAD_CALL_TOKENS * sheet.output) / 1e6;
	}

	private tokensOf(entry: Entry | undefined): number {
		const message = entry?.message;
		if (message?.role === "tool") return this.context.count(message.content);
		if (message?.role === "assistant")
			return message.toolCalls.reduce((sum, call) => sum + this.context.count(call.arguments), 0);
		return 0;
	}
}
