import { PrefixCache, type RequestSegments } from "../context/cost.js";
import { runPolicy } from "../context/engine.js";
import type { Entry, PassDecision } from "../context/ledger.js";
import { project, shownDecisions } from "../context/project.js";
import type { ContextSettings } from "../context/settings.js";
import { benchSettings, ORACLE } from "./bench-policies.js";
import { recallOfRequest } from "./recall.js";
import type { PolicyRun, ReplayContext, RequestFigures } from "./replay.js";
import { requestSegments, rewritesHistory } from "./request-segments.js";
import { RereadEstimate } from "./rereads.js";

// The oracle: the cheapest schedule of one cut — "replace every tool result older than the last N tool rounds"
// (the engine's rounds policy) — chosen with hindsight. A schedule is the set of rounds at which a cut is taken; a
// request at round t after the last cut at round c shows every result that was older than the last N tool rounds as
// of round c replaced, and everything newer verbatim. No online policy of this family can do better on the same
// trajectory, so it is the line the others are measured against.
//
// The family is the one the target names: tool results only. snowpea's rounds and auto also elide the long
// arguments of calls whose results are gone (context/arguments.ts); the oracle does not, so "÷ oracle" below 1 is
// what that mechanism adds on top of the best possible result schedule.
//
// The cut's placeholders are the engine's own rounds-policy placeholders, but BARE (no spill path): with spill paths
// the text of a cut would depend on how many spills earlier cuts took, and a cut would no longer be a function of its
// round alone. So the oracle's placeholders can differ by a few bytes from what "rounds" sends with spilling on.

/** The default N: tool rounds a cut keeps verbatim. */
export const ORACLE_KEEP_TOOL_ROUNDS = 6;

export interface OracleRun extends PolicyRun {
	/** The rounds at which the cheapest schedule cuts (ascending). */
	cuts: number[];
}

/** What a cut at each round replaces: one set of decisions per distinct cut, shared by every state that shows it. */
interface Cuts {
	/** Per round t (index t − 1): the id of the cut taken at t (0 = nothing to replace). */
	cutAt: number[];
	/** Per cut id: its decisions (id 0: none). */
	ledgers: PassDecision[][];
}

/** A cut id and the transcript view that shows it, grown in place as rounds advance (see project()). */
interface View {
	cut: number;
	ledger: PassDecision[];
	visible: Entry[];
}

function cutSettings(keepToolRounds: number): ContextSettings {
	return benchSettings({
		name: ORACLE,
		settings: { policy: "rounds", keepToolRounds, spillDir: "off", elideArgumentChars: 0 },
	});
}

/**
 * The cut each round would take: the rounds policy run on an empty ledger (so a cut never depends on an earlier
 * one). Cuts that replace the same results share one id, and a decision for an entry is one object in every cut.
 */
function computeCuts(context: ReplayContext, keepToolRounds: number): Cuts {
	const { trajectory } = context;
	const settings = cutSettings(keepToolRounds);
	const visible: Entry[] = [];
	const ids = new Map<string, number>([["", 0]]);
	const ledgers: PassDecision[][] = [[]];
	const interned = new Map<number, { shown: string; decision: PassDecision }>();
	const cutAt: number[] = [];
	for (const [index, position] of trajectory.assistants.entries()) {
		while (visible.length < position) visible.push(trajectory.entries[visible.length] as Entry);
		// The rounds policy does not read promptTokens.
		const { decisions } = runPolicy({
			entries: visible,
			ledger: [],
			round: index + 1,
			settings,
			promptTokens: 0,
			tools: context.tools,
		});
		const shared = decisions.map((decision) => {
			const shown = decision.kind === "replace" ? decision.placeholder : JSON.stringify(decision.arguments);
			const known = interned.get(decision.entry);
			if (known && known.shown === shown) return known.decision;
			interned.set(decision.entry, { shown, decision });
			return decision;
		});
		const key = shared.map((decision) => decision.entry).join(",");
		let id = ids.get(key);
		if (id === undefined) {
			id = ledgers.length;
			ids.set(key, id);
			ledgers.push(shared);
		}
		cutAt.push(id);
	}
	return { cutAt, ledgers };
}

function view(cuts: Cuts, cut: number): View {
	return { cut, ledger: cuts.ledgers[cut] as PassDecision[], visible: [] };
}

/** The request for `round` under a view: its entries grown to the round, projected with the view's cut. */
function segmentsOf(context: ReplayContext, state: View, round: number): string[] {
	const { trajectory } = context;
	const end = trajectory.assistants[round - 1] as number;
	while (state.visible.length < end) state.visible.push(trajectory.entries[state.visible.length] as Entry);
	return requestSegments(trajectory.system, project(state.visible, state.ledger, round));
}

/**
 * The prompt cost of `current` sent `gap` seconds after `previous`, priced as PrefixCache.price prices it (cached =
 * common prefix in whole tokens when warm and long enough, rounded down to the granularity; the rest written when
 * the provider charges writes). The final schedule is re-priced with PrefixCache.price itself.
 */
function promptCost(
	cache: PrefixCache,
	previous: RequestSegments | undefined,
	current: RequestSegments,
	tokens: number,
	gap: number,
): number {
	const sheet = cache.sheet;
	let cacheRead = 0;
	if (previous !== undefined && gap <= sheet.ttlSeconds) {
		const shared = cache.commonPrefixTokens(previous, current);
		if (shared >= sheet.minCacheTokens) cacheRead = Math.floor(shared / sheet.granularity) * sheet.granularity;
	}
	const cacheWrite = sheet.explicitWrites && tokens >= sheet.minCacheTokens ? tokens - cacheRead : 0;
	const uncached = tokens - cacheRead - cacheWrite;
	return (
		((cacheRead * sheet.cacheReadMultiplier + cacheWrite * sheet.cacheWriteMultiplier + uncached) * sheet.input) / 1e6
	);
}

/**
 * Prices a cut schedule request by request with a fresh PrefixCache (the same figures a policy run has). `cuts`
 * are rounds; a cut at a round where nothing new would be replaced changes nothing.
 */
export function replaySchedule(
	context: ReplayContext,
	cuts: readonly number[],
	keepToolRounds = ORACLE_KEEP_TOOL_ROUNDS,
	precomputed?: Cuts,
): OracleRun {
	const all = precomputed ?? computeCuts(context, keepToolRounds);
	const cutRounds = new Set(cuts);
	const cache = new PrefixCache(context.sheet, context.count);
	const requests: RequestFigures[] = [];
	const rereads = new RereadEstimate(context);
	let state = view(all, 0);
	let previous: RequestSegments | undefined;
	for (let round = 1; round <= context.trajectory.assistants.length; round++) {
		const cut = all.cutAt[round - 1] as number;
		if (cutRounds.has(round) && cut !== state.cut) state = view(all, cut);
		const segments = segmentsOf(context, state, round);
		const priced = cache.price(segments, context.times[round - 1] as number, context.outputTokens[round - 1]);
		const recall = recallOfRequest(context.recall, round, shownDecisions(state.visible, state.ledger, round));
		requests.push({
			tokens: priced.tokens,
			cacheRead: priced.cacheRead,
			cacheWrite: priced.cacheWrite,
			uncached: priced.uncached,
			output: context.outputTokens[round - 1] as number,
			cost: priced.cost,
			rewrite: rewritesHistory(previous, segments),
			kept: recall.kept,
			counted: recall.total,
			reread: rereads.price(round, recall.missing),
		});
		previous = segments;
	}
	return { policy: ORACLE, file: context.trajectory.file, requests, cuts: [...cutRounds].sort((a, b) => a - b) };
}

/**
 * The cheapest cut schedule, by dynamic programming over rounds. The state after request t is the cut it shows (the
 * last cut taken); from state s at t − 1 a schedule either keeps s or takes the cut of round t. A request's cost
 * depends only on its own segments and the previous request's (the cache compares with the previous request only),
 * so the minimum over states at the last round is the minimum over all schedules. Each (round, state) request is
 * projected and rendered once; rounds whose cuts replace the same results are one state.
 */
export function oracleReplay(context: ReplayContext, keepToolRounds = ORACLE_KEEP_TOOL_ROUNDS): OracleRun {
	const cuts = computeCuts(context, keepToolRounds);
	const rounds = context.trajectory.assistants.length;
	if (rounds === 0) return replaySchedule(context, [], keepToolRounds, cuts);
	const cache = new PrefixCache(context.sheet, context.count);
	const states = new Map<number, View>([[0, view(cuts, 0)]]);
	let costs = new Map<number, number>();
	let segments = new Map<number, string[]>();
	/** Per round: for each state, the state it came from. */
	const parents: Map<number, number>[] = [];
	for (let round = 1; round <= rounds; round++) {
		const target = cuts.cutAt[round - 1] as number;
		if (!states.has(target)) states.set(target, view(cuts, target));
		const gap = round === 1 ? 0 : (context.times[round - 1] as number) - (context.times[round - 2] as number);
		const nextSegments = new Map<number, string[]>();
		const nextCosts = new Map<number, number>();
		const from = new Map<number, number>();
		for (const [id, state] of states) {
			const current = segmentsOf(context, state, round);
			nextSegments.set(id, current);
			const tokens = cache.tokensOfRequest(current);
			let best = Number.POSITIVE_INFINITY;
			let parent = -1;
			if (round === 1) {
				best = promptCost(cache, undefined, current, tokens, gap);
				parent = id;
			} else if (costs.has(id)) {
				best = (costs.get(id) as number) + promptCost(cache, segments.get(id), current, tokens, gap);
				parent = id;
			}
			if (id === target && round > 1) {
				for (const [previousId, previousCost] of costs) {
					if (previousId === id || previousCost >= best) continue;
					const cost = previousCost + promptCost(cache, segments.get(previousId), current, tokens, gap);
					if (cost < best) {
						best = cost;
						parent = previousId;
					}
				}
			}
			if (parent < 0) continue;
			nextCosts.set(id, best);
			from.set(id, parent);
		}
		costs = nextCosts;
		segments = nextSegments;
		parents.push(from);
	}
	let last = -1;
	let lowest = Number.POSITIVE_INFINITY;
	for (const [id, cost] of costs) {
		if (cost < lowest || (cost === lowest && id < last)) {
			lowest = cost;
			last = id;
		}
	}
	const chosen: number[] = new Array(rounds);
	for (let round = rounds; round >= 1; round--) {
		chosen[round - 1] = last;
		last = parents[round - 1]?.get(last) as number;
	}
	const taken: number[] = [];
	for (let round = 1; round <= rounds; round++) {
		const before = round === 1 ? 0 : (chosen[round - 2] as number);
		if (chosen[round - 1] !== before) taken.push(round);
	}
	return replaySchedule(context, taken, keepToolRounds, cuts);
}
