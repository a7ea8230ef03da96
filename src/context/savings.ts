import type { PriceSheet } from "./cost.js";
import type { Decision, Entry, PassDecision } from "./ledger.js";

// What the rewrites a session already made have saved against sending everything ("off"), in input-token units —
// the budget auto's "saved" spending mode may spend on the next rewrite. Worked out from the transcript and the
// ledger alone, so it stays a pure function of the session, and always on the low side: every past rewrite is priced
// as if the cache was warm (a cold one cost nothing extra), and its re-written suffix as every cached token from its
// first change on at full size (earlier placeholders only made it smaller). The request for round k reads from the
// cache what the request for round k − 1 sent: the entries of rounds before k − 1.

/** Tokens an entry shows under `decision` (the original when undefined), as auto counts them. */
export type ShownTokens = (entry: Entry, decision: PassDecision | undefined) => number;

/**
 * The net saving so far, before the request for `round`: for each earlier round k that took decisions, the reads of
 * its removed tokens ΔT by every request after it (r·ΔT each) minus the extra its rewrite cost then
 * ((w − r)·S − w·ΔT, S its re-written suffix). Checkpoints are compaction's, not a rewrite's: left out. Pure.
 */
export function savedSoFar(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
	sheet: PriceSheet,
	tokensOf: ShownTokens,
): number {
	const write = sheet.cacheWriteMultiplier;
	const read = sheet.cacheReadMultiplier;
	// per entry, the decisions in ledger order (a snip may later be replaced by a smaller placeholder)
	const byEntry = new Map<number, PassDecision[]>();
	const byRound = new Map<number, PassDecision[]>();
	const add = (map: Map<number, PassDecision[]>, key: number, decision: PassDecision) => {
		const list = map.get(key);
		if (list) list.push(decision);
		else map.set(key, [decision]);
	};
	for (const decision of ledger) {
		if (decision.kind === "checkpoint" || decision.round >= round || !entries[decision.entry]) continue;
		add(byEntry, decision.entry, decision);
		add(byRound, decision.round, decision);
	}
	let saved = 0;
	for (const [taken, decisions] of byRound) {
		let removed = 0;
		let first = entries.length;
		for (const decision of decisions) {
			const entry = entries[decision.entry] as Entry;
			const before = byEntry.get(decision.entry)?.findLast((earlier) => earlier.round < taken);
			removed += Math.max(0, tokensOf(entry, before) - tokensOf(entry, decision));
			first = Math.min(first, decision.entry);
		}
		let suffix = 0;
		for (let index = first; index < entries.length && (entries[index] as Entry).round < taken - 1; index++)
			suffix += tokensOf(entries[index] as Entry, undefined);
		const reads = Math.max(0, round - 1 - taken);
		saved += reads * read * removed - ((write - read) * suffix - write * removed);
	}
	return saved;
}
