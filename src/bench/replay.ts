import { PrefixCache, type PriceSheet, type RequestSegments } from "../context/cost.js";
import { runPolicy } from "../context/engine.js";
import type { Decision, Entry } from "../context/ledger.js";
import { project, shownDecisions } from "../context/project.js";
import type { ContextSettings } from "../context/settings.js";
import type { SnipTool } from "../context/snip.js";
import { estimateTokens } from "../context/tokens.js";
import { buildRecallIndex, type RecallIndex, recallOfRequest } from "./recall.js";
import { requestSegments, rewritesHistory } from "./request-segments.js";
import { RereadEstimate } from "./rereads.js";
import { toolTiers } from "./tool-tiers.js";
import type { Trajectory } from "./trajectory.js";

// The replay: every request of a recorded trajectory rebuilt the way the agent builds it — the policy's runPolicy
// pass, its decisions appended to the ledger, project() — and priced by the one prefix-cache simulator. The agent's
// actions are held fixed: what it did next does not depend on what the policy showed it. No I/O.

/** The billed figures of one request. Tokens are estimated prompt tokens (o200k); cost is USD. */
export interface RequestFigures {
	tokens: number;
	cacheRead: number;
	cacheWrite: number;
	uncached: number;
	/** Tokens of the assistant message that answered it (the same under every policy). */
	output: number;
	/** Prompt cost plus the cost of `output`. */
	cost: number;
	/** The request changed something the previous request sent (see rewritesHistory). */
	rewrite: boolean;
	/** Recall tokens still present in the request, and counted for it. */
	kept: number;
	counted: number;
	/** Estimated USD of reading again what the request no longer showed (rereads.ts); not part of `cost`. */
	reread: number;
}

/** One policy over one trajectory, request by request (index k − 1 is request k). */
export interface PolicyRun {
	policy: string;
	file: string;
	requests: RequestFigures[];
}

/** Everything about one trajectory that every policy's replay shares: computed once. */
export interface ReplayContext {
	trajectory: Trajectory;
	sheet: PriceSheet;
	/** Token counter shared by every policy's PrefixCache, memoized by text. */
	count: (text: string) => number;
	recall: RecallIndex;
	tools: Record<string, SnipTool>;
	/** Per request: the tokens of the assistant message that answered it (the same under every policy). */
	outputTokens: number[];
	/** Per request: when it is sent, in seconds. */
	times: number[];
}

export interface ReplayOptions {
	sheet: PriceSheet;
	/** Spacing of requests when the trajectory carries no times (default 20 s). */
	secondsPerRound?: number;
}

export const DEFAULT_SECONDS_PER_ROUND = 20;

/** Prepares a trajectory for replay. Pure apart from memoization. */
export function prepareReplay(trajectory: Trajectory, options: ReplayOptions): ReplayContext {
	const memo = new Map<string, number>();
	const count = (text: string): number => {
		let tokens = memo.get(text);
		if (tokens === undefined) {
			tokens = estimateTokens(text);
			memo.set(text, tokens);
		}
		return tokens;
	};
	const spacing = options.secondsPerRound ?? DEFAULT_SECONDS_PER_ROUND;
	const outputTokens = trajectory.assistants.map((position) => {
		const message = trajectory.entries[position]?.message;
		if (message?.role !== "assistant") return 0;
		let tokens = estimateTokens(message.text);
		for (const call of message.toolCalls) tokens += estimateTokens(call.name) + estimateTokens(call.arguments);
		return tokens;
	});
	return {
		trajectory,
		sheet: options.sheet,
		count,
		recall: buildRecallIndex(trajectory),
		tools: toolTiers(trajectory),
		outputTokens,
		times: trajectory.assistants.map((_, index) => trajectory.times?.[index] ?? (index + 1) * spacing),
	};
}

/** Called with each priced request; for tests and charts. */
export type RequestObserver = (request: number, segments: RequestSegments, figures: RequestFigures) => void;

/**
 * Replays one policy: for request k, the entries before assistant message k, the policy's ledger so far, round k,
 * `settings`, and promptTokens = the request as it would be sent before this round's decisions; runPolicy; its
 * decisions appended; project; render; price with the policy's own PrefixCache at the request's time, with the
 * assistant message's tokens as output. Deterministic.
 */
export function replayPolicy(
	context: ReplayContext,
	name: string,
	settings: ContextSettings,
	observe?: RequestObserver,
): PolicyRun {
	const { trajectory } = context;
	const cache = new PrefixCache(context.sheet, context.count);
	// The projection remembers its work per (entries array, ledger array): both grow in place, never replaced.
	const visible: Entry[] = [];
	const ledger: Decision[] = [];
	const requests: RequestFigures[] = [];
	const rereads = new RereadEstimate(context);
	let previous: RequestSegments | undefined;
	for (const [index, position] of trajectory.assistants.entries()) {
		const round = index + 1;
		while (visible.length < position) visible.push(trajectory.entries[visible.length] as Entry);
		let segments = requestSegments(trajectory.system, project(visible, ledger, round));
		const promptTokens = cache.tokensOfRequest(segments);
		// `economy` is what "auto" prices its rewrites with: the bench's own price sheet and the time since the
		// previous request, so that auto online and the bench offline use the same cost model (other policies ignore it).
		const idleSeconds = index === 0 ? 0 : (context.times[index] as number) - (context.times[index - 1] as number);
		const state = {
			entries: visible,
			ledger,
			round,
			settings,
			promptTokens,
			tools: context.tools,
			economy: { sheet: context.sheet, idleSeconds },
		};
		const { decisions } = runPolicy(state);
		if (decisions.length > 0) {
			ledger.push(...decisions);
			segments = requestSegments(trajectory.system, project(visible, ledger, round));
		}
		const priced = cache.price(segments, context.times[index] as number, context.outputTokens[index]);
		const recall = recallOfRequest(context.recall, round, shownDecisions(visible, ledger, round));
		const figures: RequestFigures = {
			tokens: priced.tokens,
			cacheRead: priced.cacheRead,
			cacheWrite: priced.cacheWrite,
			uncached: priced.uncached,
			output: context.outputTokens[index] as number,
			cost: priced.cost,
			rewrite: rewritesHistory(previous, segments),
			kept: recall.kept,
			counted: recall.total,
			reread: rereads.price(round, recall.missing),
		};
		requests.push(figures);
		observe?.(round, segments, figures);
		previous = segments;
	}
	return { policy: name, file: trajectory.file, requests };
}
