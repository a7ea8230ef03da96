import { PRICE_SHEETS, type PriceSheet, rewriteBenefit, warmProbability } from "./cost.js";
import type { Entry, ReplaceDecision } from "./ledger.js";
import { MIN_SNIP_BYTES, type Policy, type PolicyState, roundsPolicy } from "./policies.js";
import { currentDecisions } from "./project.js";
import { estimateTokens } from "./tokens.js";

/** What "auto" prices its decisions with; the agent fills it from the model table and the clock. */
export interface Economy {
	sheet: PriceSheet;
	/** Seconds since the previous request was sent (0 when unknown). */
	idleSeconds: number;
}

/** Why auto did or did not rewrite this round: logged with every decision. */
export interface AutoReason {
	removedTokens: number;
	suffixTokens: number;
	futureRequests: number;
	warmProbability: number;
	/** Expected net saving in input-token units (positive = pays). */
	benefit: number;
	forced: boolean;
}

// The estimated tokens of an entry as shown: remembered per message or per decision (both never change).
const shownTokens = new WeakMap<object, number>();

function tokensOf(entry: Entry, decision: ReplaceDecision | undefined): number {
	const key = decision ?? entry.message;
	let tokens = shownTokens.get(key);
	if (tokens === undefined) {
		tokens = decision ? estimateTokens(decision.placeholder) + 8 : estimateTokens(JSON.stringify(entry.message));
		shownTokens.set(key, tokens);
	}
	return tokens;
}

/**
 * The expected number of further requests, predicted from the session so far: a run that has lasted n requests is
 * expected to last about n more (the Lindy estimate), at least one. The saving of a rewrite lasts that long.
 */
export function predictFutureRequests(round: number): number {
	return Math.max(1, round - 1);
}

/**
 * Plans auto's rewrite for this round. The candidates are what "rounds" would prune (results older than the newest
 * keepToolRounds tool rounds, same placeholders and spill files), minus results under 1 KB. A rewrite is priced as
 * one batch starting at some candidate P: it removes every candidate from P on (ΔT) and re-writes the cached suffix
 * after P (S). The batch with the best expected net saving (cost.ts `rewriteBenefit`) is taken when that saving is
 * positive; otherwise nothing changes and the cache stays intact. When the prompt is near the compaction threshold,
 * every candidate goes regardless of price: waiting must never push the session into a compaction.
 */
export function planAuto(state: PolicyState, economy: Economy): { decisions: ReplaceDecision[]; reason: AutoReason } {
	const candidates = roundsPolicy(state).filter((decision) => decision.bytesBefore >= MIN_SNIP_BYTES);
	const quiet: AutoReason = {
		removedTokens: 0,
		suffixTokens: 0,
		futureRequests: predictFutureRequests(state.round),
		warmProbability: warmProbability(economy.idleSeconds, economy.sheet),
		benefit: 0,
		forced: false,
	};
	if (candidates.length === 0) return { decisions: [], reason: quiet };

	const current = currentDecisions(state.entries, state.ledger, state.round);
	// Entries before the newest assistant message were in the previous request, hence in the cache.
	let cachedEnd = state.entries.length;
	for (let index = state.entries.length - 1; index >= 0; index--) {
		if (state.entries[index]?.message.role === "assistant") {
			cachedEnd = index;
			break;
		}
	}
	// suffix[i] = tokens of cached entries from i on
	const suffix = new Array<number>(cachedEnd + 1).fill(0);
	for (let index = cachedEnd - 1; index >= 0; index--) {
		suffix[index] = (suffix[index + 1] as number) + tokensOf(state.entries[index] as Entry, current[index]);
	}
	const saving = candidates.map(
		(decision) =>
			tokensOf(state.entries[decision.entry] as Entry, current[decision.entry]) -
			estimateTokens(decision.placeholder) -
			8,
	);

	const { contextWindow, compactRatio } = state.settings;
	const forced = contextWindow > 0 && state.promptTokens >= 0.9 * compactRatio * contextWindow;
	let best = { start: -1, benefit: 0, removed: 0, suffixTokens: 0 };
	let removed = 0;
	for (let start = candidates.length - 1; start >= 0; start--) {
		removed += saving[start] as number;
		const entry = (candidates[start] as ReplaceDecision).entry;
		const suffixTokens = entry < cachedEnd ? (suffix[entry] as number) : 0;
		const benefit = rewriteBenefit(
			{
				removedTokens: removed,
				suffixTokens,
				futureRequests: quiet.futureRequests,
				warmProbability: quiet.warmProbability,
			},
			economy.sheet,
		);
		if (benefit > best.benefit || (forced && start === 0)) best = { start, benefit, removed, suffixTokens };
	}
	if (best.start < 0) return { decisions: [], reason: quiet };
	if (forced) best.start = 0;
	return {
		decisions: candidates.slice(best.start).map((decision) => ({ ...decision, reason: "prune" as const })),
		reason: {
			...quiet,
			removedTokens: best.removed,
			suffixTokens: best.suffixTokens,
			benefit: best.benefit,
			forced,
		},
	};
}

/** The "auto" policy with a default economy (Anthropic prices, a warm cache) when the caller gave none. */
export const autoPolicy: Policy = (state) =>
	planAuto(state, state.economy ?? { sheet: PRICE_SHEETS.anthropic, idleSeconds: 0 }).decisions;
