import type { ToolResultMessage } from "../llm/types.js";
import type { Decision, Entry, ReplaceDecision } from "./ledger.js";
import { activeCheckpoint, currentDecisions, originalBytes, placeholderBytes } from "./project.js";

/** One tool result of the transcript as the policies see it, in transcript order. */
export interface ToolResultView {
	/** Position in the entries array. */
	entry: number;
	message: ToolResultMessage;
	round: number;
	/** Which assistant message it answers: 0 for the first assistant message of the transcript, and so on. */
	group: number;
	originalBytes: number;
	/** The decision it shows in the request being built, if any. */
	current: ReplaceDecision | undefined;
	/** UTF-8 bytes of its text as shown. */
	shownBytes: number;
	/**
	 * Part of the in-flight round: the newest round that has tool results, or the answers to the newest assistant
	 * message that has them. The model has not seen these yet, so no policy touches them.
	 */
	inFlight: boolean;
}

/**
 * Every tool result the request for `round` shows, with its state there. Pure. With a checkpoint in force, results
 * before its firstKept are folded into its summary: they are not listed, so no policy ever looks at them again.
 */
export function viewToolResults(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
): ToolResultView[] {
	const decisions = currentDecisions(entries, ledger, round);
	const shownFrom = activeCheckpoint(entries, ledger, round)?.firstKept ?? 0;
	const views: ToolResultView[] = [];
	let group = -1;
	for (const [index, entry] of entries.entries()) {
		const message = entry.message;
		if (message.role === "assistant") group++;
		if (message.role !== "tool" || index < shownFrom) continue;
		const current = decisions[index];
		const size = originalBytes(entry);
		views.push({
			entry: index,
			message,
			round: entry.round,
			group,
			originalBytes: size,
			current,
			shownBytes: current ? placeholderBytes(current) : size,
			inFlight: false,
		});
	}
	const last = views.at(-1);
	if (last) {
		let newestRound = last.round;
		for (const view of views) newestRound = Math.max(newestRound, view.round);
		for (const view of views) view.inFlight = view.round === newestRound || view.group === last.group;
	}
	return views;
}

/**
 * The results no policy may replace: the in-flight round, plus the newest `keep` results (a window larger than the
 * history protects everything). Returns the index into `views` where protection starts; everything from there on
 * and every in-flight result is protected.
 */
export function protectedFrom(views: readonly ToolResultView[], keep: number): number {
	const firstInFlight = views.findIndex((view) => view.inFlight);
	const byCount = Math.max(0, views.length - Math.max(0, keep));
	return firstInFlight < 0 ? byCount : Math.min(byCount, firstInFlight);
}

/** True when a policy may still replace this result: not exempt, and not already replaced for good. */
export function replaceable(view: ToolResultView, exemptTools: readonly string[]): boolean {
	if (exemptTools.includes(view.message.toolName)) return false;
	return view.current === undefined || view.current.reason === "snip";
}
