import { elideArguments, withArgumentDecisions } from "./arguments.js";
import { PRICE_SHEETS, type PriceSheet, rewriteBenefit, warmProbability } from "./cost.js";
import type { Entry, PassDecision } from "./ledger.js";
import { withShownArguments } from "./placeholders.js";
import { type Policy, type PolicyState, roundsReplacements } from "./policies.js";
import { shownDecisions } from "./project.js";
import { savedSoFar } from "./savings.js";
import { estimateTokens } from "./tokens.js";

/** What "auto" prices its decisions with; the agent fills it from the model table and the clock. */
export interface Economy {
	sheet: PriceSheet;
	/** Seconds since the previous request was sent (0 when unknown). */
	idleSeconds: number;
	/**
	 * True when this request changes its tool list or system prompt anyway (a deferred tool loaded, an instruction
	 * file edited): both come before the messages, so the provider re-writes every cached message whatever auto does
	 * and a rewrite costs nothing extra — priced like a cold cache.
	 */
	prefixChanged?: boolean;
	/**
	 * The most requests the session can still make after this one, when its end is known (a child agent's round
	 * budget); the expected further requests never exceed it. Absent: unbounded.
	 */
	futureRequestsAtMost?: number;
}

/** Why auto did or did not rewrite this round: logged with every decision. */
export interface AutoReason {
	removedTokens: number;
	suffixTokens: number;
	futureRequests: number;
	warmProbability: number;
	/** Expected net saving in input-token units (positive = pays). */
	benefit: number;
	/** The batch size that makes a rewrite worth its cache write now rather than later (tokens). */
	batchTokens: number;
	forced: boolean;
}

// The estimated tokens of an entry as shown: remembered per message or per decision (both never change).
const shownTokens = new WeakMap<object, number>();

function tokensOf(entry: Entry, decision: PassDecision | undefined): number {
	const key = decision ?? entry.message;
	let tokens = shownTokens.get(key);
	if (tokens === undefined) {
		tokens = estimateTokens(JSON.stringify(shownMessage(entry, decision)));
		shownTokens.set(key, tokens);
	}
	return tokens;
}

/** The message an entry shows under `decision`, as far as its size goes. */
function shownMessage(entry: Entry, decision: PassDecision | undefined): unknown {
	const message = entry.message;
	if (!decision) return message;
	if (decision.kind === "replace") return { ...message, content: decision.placeholder };
	return message.role === "assistant" ? withShownArguments(message, decision.arguments) : message;
}

/**
 * The further requests a rewrite's saving can count on, predicted from the session so far. A run that has lasted n
 * requests lasts about n more (the Lindy estimate) — but only half the time, so a rewrite is priced over n/2: the
 * saving it can expect with even odds. (Pricing over the full n made late cuts in short runs cost more than doing
 * nothing; measured on the shared corpus with `snowpea bench`.)
 */
export function predictFutureRequests(round: number): number {
	return Math.max(1, Math.floor((round - 1) / 2));
}

/**
 * The stale tokens worth removing in one batch (economic order quantity): with stale output arriving at `growth`
 * tokens per request, cutting every M requests costs p·(w − r)·L per cut for re-writing the live suffix L and
 * r·growth·M/2 per request for carrying stale tokens in between; the total is least at M* = √(2·p·(w − r)·L /
 * (r·growth)), i.e. a batch of growth·M* tokens. Rewriting a smaller batch pays for a cache write too early; a larger
 * one carries dead weight too long.
 */
export function batchThreshold(liveSuffixTokens: number, growth: number, warm: number, sheet: PriceSheet): number {
	const write = sheet.cacheWriteMultiplier;
	const read = sheet.cacheReadMultiplier;
	if (growth <= 0 || read <= 0) return 0;
	return Math.sqrt((2 * warm * Math.max(0, write - read) * liveSuffixTokens * growth) / read);
}

/**
 * Plans auto's rewrite for this round. The candidates are what "rounds" would prune (results older than the newest
 * autoKeepToolRounds tool rounds, same placeholders and spill files; small ones ride along for free) and the long
 * arguments of the calls those results answer (arguments.ts), in transcript order. A rewrite is priced as one batch
 * starting at some candidate P: it removes every candidate from P on (ΔT) and re-writes the cached suffix after P
 * (S); a call's arguments come before its results, so a batch that takes them takes those results too. A batch is
 * taken when it pays against doing nothing for the expected rest of the session (cost.ts `rewriteBenefit` > 0) AND
 * against rewriting later (ΔT at least the economic batch size, `batchThreshold`); among those, the one with the best
 * expected saving. Otherwise nothing changes and the cache stays intact. A cold cache (idle past the TTL, or a request
 * whose tools or system prompt change anyway) makes the write free, so everything worth removing goes. With
 * autoSpend "saved", a batch must also cost no more up front than earlier rewrites have saved (savings.ts). When the
 * prompt nears the compaction threshold every candidate goes regardless of price: waiting must never push the
 * session into a compaction.
 */
export function planAuto(state: PolicyState, economy: Economy): { decisions: PassDecision[]; reason: AutoReason } {
	const keep = state.settings.autoKeepToolRounds;
	const results = roundsReplacements({ ...state, settings: { ...state.settings, keepToolRounds: keep } });
	const { entries, ledger, round, settings } = state;
	const candidates = withArgumentDecisions(entries, ledger, round, settings, results.decisions, results.stale);
	const quiet: AutoReason = {
		removedTokens: 0,
		suffixTokens: 0,
		futureRequests: Math.min(
			predictFutureRequests(state.round),
			economy.futureRequestsAtMost ?? Number.POSITIVE_INFINITY,
		),
		warmProbability: economy.prefixChanged ? 0 : warmProbability(economy.idleSeconds, economy.sheet),
		benefit: 0,
		batchTokens: 0,
		forced: false,
	};
	if (candidates.length === 0) return { decisions: [], reason: quiet };

	const current = shownDecisions(state.entries, state.ledger, state.round);
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
	const saving = candidates.map((decision) => {
		const entry = state.entries[decision.entry] as Entry;
		return tokensOf(entry, current[decision.entry]) - tokensOf(entry, decision);
	});

	const { contextWindow, compactRatio } = state.settings;
	const forced = contextWindow > 0 && state.promptTokens >= 0.9 * compactRatio * contextWindow;
	const growth = staleGrowth(state);
	// "saved": a rewrite may cost no more up front than earlier rewrites have saved (savings.ts)
	const budget =
		settings.autoSpend === "saved"
			? savedSoFar(entries, ledger, round, economy.sheet, tokensOf)
			: Number.POSITIVE_INFINITY;
	const { cacheWriteMultiplier: write, cacheReadMultiplier: read } = economy.sheet;
	let best = { start: -1, benefit: 0, removed: 0, suffixTokens: 0, batchTokens: 0 };
	let removed = 0;
	for (let start = candidates.length - 1; start >= 0; start--) {
		removed += saving[start] as number;
		const entry = (candidates[start] as PassDecision).entry;
		const suffixTokens = entry < cachedEnd ? (suffix[entry] as number) : 0;
		const quote = {
			removedTokens: removed,
			suffixTokens,
			futureRequests: quiet.futureRequests,
			warmProbability: quiet.warmProbability,
		};
		const benefit = rewriteBenefit(quote, economy.sheet);
		const live = Math.max(0, suffixTokens - removed);
		const batchTokens = batchThreshold(live, growth, quiet.warmProbability, economy.sheet);
		const upFront = quiet.warmProbability * (write - read) * suffixTokens - write * removed;
		const worthIt = benefit > best.benefit && removed >= batchTokens && upFront <= budget;
		if (worthIt || (forced && start === 0)) best = { start, benefit, removed, suffixTokens, batchTokens };
	}
	if (best.start < 0) return { decisions: [], reason: quiet };
	if (forced) best.start = 0;
	return {
		decisions: candidates.slice(best.start),
		reason: {
			...quiet,
			removedTokens: best.removed,
			suffixTokens: best.suffixTokens,
			benefit: best.benefit,
			batchTokens: best.batchTokens,
			forced,
		},
	};
}

/**
 * The tokens per request that will turn stale over the next rounds. A result becomes a candidate autoKeepToolRounds
 * rounds after it arrives, so what turns stale next is exactly what arrived in the last autoKeepToolRounds rounds: their
 * tool output and elidable arguments, per round, are the rate (a whole-session average overstates it once a run
 * settles down, and made auto wait too long between batches).
 */
function staleGrowth(state: PolicyState): number {
	const window = Math.max(1, state.settings.autoKeepToolRounds);
	const from = Math.max(1, state.round - window);
	let tokens = 0;
	for (const entry of state.entries) {
		if (entry.round < from) continue;
		if (entry.message.role === "tool") tokens += tokensOf(entry, undefined);
		else if (entry.message.role === "assistant") tokens += elidableTokens(entry, state.settings.elideArgumentChars);
	}
	return tokens / Math.max(1, state.round - from);
}

/** The tokens eliding an assistant message's long arguments would save (0 when it has none), remembered per entry. */
function elidableTokens(entry: Entry, minCharacters: number): number {
	const known = elidable.get(entry);
	if (known?.minCharacters === minCharacters) return known.saved;
	const message = entry.message;
	const elided = message.role === "assistant" ? elideArguments(message, minCharacters) : undefined;
	let saved = 0;
	if (elided && message.role === "assistant") {
		const shown = withShownArguments(message, elided.arguments);
		saved = Math.max(0, tokensOf(entry, undefined) - estimateTokens(JSON.stringify(shown)));
	}
	elidable.set(entry, { minCharacters, saved });
	return saved;
}

const elidable = new WeakMap<Entry, { minCharacters: number; saved: number }>();

/** The "auto" policy with a default economy (Anthropic prices, a warm cache) when the caller gave none. */
export const autoPolicy: Policy = (state) =>
	planAuto(state, state.economy ?? { sheet: PRICE_SHEETS.anthropic, idleSeconds: 0 }).decisions;
