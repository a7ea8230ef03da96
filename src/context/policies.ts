import { utf8Bytes } from "../llm/text.js";
import { withArgumentDecisions } from "./arguments.js";
import type { Economy } from "./auto.js";
import {
	type Decision,
	type Entry,
	nextSpillPosition,
	type PassDecision,
	type ReplaceDecision,
	type ReplaceReason,
	spillPath,
} from "./ledger.js";
import { clearPlaceholder, elidePlaceholder, maskPlaceholder, prunePlaceholder } from "./placeholders.js";
import { type ContextSettings, lowWaterMark } from "./settings.js";
import { characterCount, type SnipTool, snipGeometry, snipToolResult } from "./snip.js";
import { estimateTokens } from "./tokens.js";
import { protectedFrom, replaceable, type ToolResultView, viewToolResults } from "./tool-results.js";

export { barePlaceholder } from "./placeholders.js";

/** Everything a policy decides from. */
export interface PolicyState {
	entries: Entry[];
	ledger: Decision[];
	/** The round about to be sent; new decisions carry it. */
	round: number;
	settings: ContextSettings;
	/** Estimated prompt tokens of the request about to be sent (before this pass), calibrated by the caller. */
	promptTokens: number;
	/** The tools by name: their tier and snip hint. */
	tools: Record<string, SnipTool>;
	/** Prices and cache timing for "auto" (auto.ts); other policies ignore it. */
	economy?: Economy;
}

/**
 * A policy returns the new decisions for the request about to be sent, oldest entry first, or [] when there is
 * nothing to do: replaced results, and (rounds and auto) the elided arguments of calls whose results are all replaced. Contract, for every policy: pure; never touches the in-flight round, an exempt tool's result or a
 * result already replaced (a snipped result may still be replaced by a smaller placeholder); every placeholder is
 * smaller than the text it replaces; running again with its decisions appended to the ledger returns [].
 * With spilling on (spillDir not "off" and spillAvailable), each new decision names a spill file by ledger position.
 */
export type Policy = (state: PolicyState) => PassDecision[];

/** A policy that only replaces results. */
export type ResultPolicy = (state: PolicyState) => ReplaceDecision[];

/** "off": the transcript is sent as it is. */
export const offPolicy: ResultPolicy = () => [];

/**
 * "rounds" (seed 000): a tool round is the results answering one assistant message; every result of a tool round
 * older than the newest `keepToolRounds` becomes `[earlier <tool> output pruned — <N> chars; …]`, and the long
 * argument values of its calls are elided with it (arguments.ts; `elideArgumentChars`).
 */
export const roundsPolicy: Policy = (state) => {
	const { decisions, stale } = roundsReplacements(state);
	return withArgumentDecisions(state.entries, state.ledger, state.round, state.settings, decisions, stale);
};

/**
 * The results "rounds" replaces (without the arguments that go with them), and every result it counts as stale:
 * outside the newest keepToolRounds tool rounds and not exempt, whether or not a placeholder would be smaller.
 */
export function roundsReplacements(state: PolicyState): { decisions: ReplaceDecision[]; stale: Set<number> } {
	const views = viewToolResults(state.entries, state.ledger, state.round);
	const groups = [...new Set(views.map((view) => view.group))];
	const kept = new Set(groups.slice(Math.max(0, groups.length - state.settings.keepToolRounds)));
	const replace = replacer(state);
	const stale = new Set<number>();
	const decisions = collect(views, views.length, state, (view) => {
		if (kept.has(view.group)) return undefined;
		stale.add(view.entry);
		return replace(view, "prune", (path) =>
			prunePlaceholder(view.message.toolName, characterCount(view.message.content), path),
		);
	});
	return { decisions, stale };
}

/**
 * "budget" (seed 003): when live tool-result bytes exceed historyBudgetBytes, elide the oldest results in one pass
 * until live bytes are at or below the low-water mark, or nothing unprotected is left. Protected: the newest
 * keepRecentResults results and the in-flight round.
 */
export const budgetPolicy: ResultPolicy = (state) => {
	const budget = state.settings.historyBudgetBytes;
	if (budget <= 0) return [];
	const views = viewToolResults(state.entries, state.ledger, state.round);
	let live = views.reduce((sum, view) => sum + view.shownBytes, 0);
	if (live <= budget) return [];
	const low = lowWaterMark(budget, state.settings.historyBudgetLowBytes);
	const replace = replacer(state);
	const end = protectedFrom(views, state.settings.keepRecentResults);
	return collect(views, end, state, (view) => {
		if (live <= low) return undefined;
		const decision = replace(view, "elide", (path) =>
			elidePlaceholder(view.message.toolName, view.originalBytes, path),
		);
		if (decision) live -= view.shownBytes - decision.bytesAfter;
		return decision;
	});
};

/** Results smaller than this (UTF-8 bytes) are never snipped. */
export const MIN_SNIP_BYTES = 1024;

/**
 * "ratio" (seed 004): once promptTokens ≥ toolResultSnipRatio × contextWindow, every stale result is cut to its head
 * and tail (snip.ts). Stale: outside the in-flight round and the newest keepRecentResults results. Results under
 * 1 KB, error results and results already replaced stay as they are. A window of 0 turns it off.
 */
export const ratioPolicy: ResultPolicy = (state) => {
	const { contextWindow, toolResultSnipRatio } = state.settings;
	if (contextWindow <= 0 || state.promptTokens < toolResultSnipRatio * contextWindow) return [];
	const views = viewToolResults(state.entries, state.ledger, state.round);
	const replace = replacer(state);
	return collect(views, protectedFrom(views, state.settings.keepRecentResults), state, (view) => {
		if (view.current || view.message.isError || view.originalBytes < MIN_SNIP_BYTES) return undefined;
		const { toolName, content } = view.message;
		const geometry = snipGeometry(Object.hasOwn(state.tools, toolName) ? state.tools[toolName] : undefined);
		return replace(view, "snip", (path) => snipToolResult(content, { toolName, geometry, archivePath: path }));
	});
};

/** "mask" (observation masking): every result but the newest maskKeep becomes `[earlier <tool> output omitted]`. */
export const maskPolicy: ResultPolicy = (state) => {
	const views = viewToolResults(state.entries, state.ledger, state.round);
	const replace = replacer(state);
	return collect(views, protectedFrom(views, state.settings.maskKeep), state, (view) =>
		replace(view, "mask", (path) => maskPlaceholder(view.message.toolName, path)),
	);
};

/**
 * "clear" (Anthropic's tool-result clearing): once promptTokens ≥ clearTriggerTokens, every result but the newest
 * clearKeep becomes `[tool result cleared]` — but only when that clears at least clearMinTokens estimated tokens,
 * so a cache write is never spent on a small gain.
 */
export const clearPolicy: ResultPolicy = (state) => {
	if (state.promptTokens < state.settings.clearTriggerTokens) return [];
	const views = viewToolResults(state.entries, state.ledger, state.round);
	const replace = replacer(state);
	let cleared = 0;
	const decisions = collect(views, protectedFrom(views, state.settings.clearKeep), state, (view) => {
		const decision = replace(view, "clear", clearPlaceholder);
		if (decision)
			cleared += shownTokens(state.entries[view.entry] as Entry, view.current) - estimateTokens(decision.placeholder);
		return decision;
	});
	return cleared >= state.settings.clearMinTokens ? decisions : [];
};

/** Walks views[0, end) oldest first, skipping the in-flight round and what may not be replaced. */
function collect(
	views: readonly ToolResultView[],
	end: number,
	state: PolicyState,
	decide: (view: ToolResultView) => ReplaceDecision | undefined,
): ReplaceDecision[] {
	const decisions: ReplaceDecision[] = [];
	for (const view of views.slice(0, end)) {
		if (view.inFlight || !replaceable(view, state.settings.exemptTools)) continue;
		const decision = decide(view);
		if (decision) decisions.push(decision);
	}
	return decisions;
}

/**
 * Makes decisions for one pass. A replaced snip keeps its spill (the original's archive); otherwise, with spilling
 * on, each decision takes the next ledger spill position. The size guard uses the placeholder actually used: a
 * placeholder that is not smaller than the text shown now gives no decision (and takes no position).
 */
function replacer(state: PolicyState) {
	const { spillDir, spillAvailable } = state.settings;
	const spilling = spillDir !== "off" && spillAvailable;
	let next = nextSpillPosition(state.ledger);
	return (
		view: ToolResultView,
		reason: ReplaceReason,
		text: (path?: string) => string,
	): ReplaceDecision | undefined => {
		const reused = spilling ? view.current?.spill : undefined;
		const spill = reused ?? (spilling ? { position: next, path: spillPath(spillDir, next) } : undefined);
		const placeholder = text(spill?.path);
		const bytesAfter = utf8Bytes(placeholder);
		if (bytesAfter >= view.shownBytes) return undefined;
		if (spill && !reused) next++;
		return {
			kind: "replace",
			round: state.round,
			entry: view.entry,
			toolName: view.message.toolName,
			reason,
			placeholder,
			bytesBefore: view.originalBytes,
			bytesAfter,
			...(spill ? { spill } : {}),
		};
	};
}

const tokenCounts = new WeakMap<object, number>();

/** Estimated tokens of what an entry shows now, remembered per entry and per decision. */
function shownTokens(entry: Entry, current: ReplaceDecision | undefined): number {
	const key = current ?? entry;
	let tokens = tokenCounts.get(key);
	if (tokens === undefined) {
		const message = entry.message;
		tokens = estimateTokens(current ? current.placeholder : message.role === "tool" ? message.content : "");
		tokenCounts.set(key, tokens);
	}
	return tokens;
}
