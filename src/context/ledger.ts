import type { Message } from "../llm/types.js";

// The transcript says what happened; the ledger says what the model is shown instead. Both are append-only and
// stored with the session; the projection (project.ts) renders one from the other.

/** One transcript entry; its index in the entries array is its permanent position. */
export interface Entry {
	message: Message;
	/** The round the message belongs to; rounds never decrease along the transcript. */
	round: number;
}

/** Why a tool result is replaced: the policy that decided it. */
export type ReplaceReason = "prune" | "elide" | "snip" | "mask" | "clear" | "skill";

/** Where the full original text of a replaced result is kept (the agent writes the file, never the engine). */
export interface Spill {
	/** Ledger spill position: 0, 1, 2, … in the order decisions were taken; the file name comes from it alone. */
	position: number;
	path: string;
}

/**
 * "From round `round` on, the tool result at entry `entry` is shown as `placeholder`."
 * The placeholder text is fixed when the decision is taken and never rendered again.
 */
export interface ReplaceDecision {
	kind: "replace";
	round: number;
	entry: number;
	toolName: string;
	reason: ReplaceReason;
	placeholder: string;
	/** UTF-8 bytes of the ORIGINAL result (also when a snipped result is replaced again). */
	bytesBefore: number;
	/** UTF-8 bytes of `placeholder`. */
	bytesAfter: number;
	spill?: Spill;
}

/**
 * A compaction checkpoint: "from round `round` on, the request shows the entries in `pinned`, then `summary` as one
 * user message, then every entry from `firstKept` on" (replace decisions still apply to those). The summary text is
 * fixed when the decision is taken and never rewritten; the latest checkpoint in ledger order whose round has come
 * supersedes every earlier one, and every later pass works on the entries it shows, never on those it folded.
 * Built by src/context/compaction.ts.
 */
export interface CheckpointDecision {
	kind: "checkpoint";
	round: number;
	/** Entry index where the verbatim tail starts: a user or assistant message, so tool-call pairs stay whole. */
	firstKept: number;
	/** Entries before `firstKept` kept verbatim ahead of the summary (the first user message), ascending. */
	pinned: number[];
	/** The summary text under the fixed headings; shown inside `<compaction-summary>` tags. */
	summary: string;
	/** Estimated prompt tokens of the request before the checkpoint (calibrated by the last real usage). */
	tokensBefore: number;
	/** Estimated prompt tokens of the request with the checkpoint applied. */
	tokensAfter: number;
	/** "summary": the model wrote it; "digest": the mechanical stand-in (the summary call failed or said nothing). */
	source: "summary" | "digest";
}

/**
 * "From round `round` on, the assistant message at `entry` shows `arguments` as its tool calls' arguments": the long
 * string values of a call whose results are all replaced, swapped for a note (src/context/arguments.ts). Text and
 * call ids stay; each shown text is valid JSON of the same shape as the original. Fixed when taken, like a placeholder.
 */
export interface ArgumentsDecision {
	kind: "arguments";
	round: number;
	entry: number;
	/** Per tool call of the message, in order: the arguments text shown. */
	arguments: string[];
	/** UTF-8 bytes of the original arguments of every call. */
	bytesBefore: number;
	/** UTF-8 bytes of `arguments`. */
	bytesAfter: number;
	/** Where the elided values are kept (named by ledger spill position, like a result's spill). */
	spill?: Spill;
}

/** What one context pass decides: replaced tool results and elided call arguments. */
export type PassDecision = ReplaceDecision | ArgumentsDecision;

/** Every kind of ledger decision. Later kinds (tool loads) join this union: switch on `kind`. */
export type Decision = ReplaceDecision | ArgumentsDecision | CheckpointDecision;

/** File name of a spill: the position as at least four digits, e.g. `0007.txt`. Nothing else reaches the path. */
export function spillPath(spillDir: string, position: number): string {
	return `${spillDir.replace(/\/+$/, "")}/${String(position).padStart(4, "0")}.txt`;
}

/** The position the next spilled decision gets: one past the highest position in the ledger, 0 for the first. */
export function nextSpillPosition(ledger: readonly Decision[]): number {
	let next = 0;
	for (const decision of ledger) {
		if (decision.kind !== "checkpoint" && decision.spill) next = Math.max(next, decision.spill.position + 1);
	}
	return next;
}

/**
 * The decisions among `decisions` whose spill file still has to be written: a replacement of an already snipped
 * result reuses the snip's file, so its position is already in `ledger`. Order is kept.
 */
export function spillsToWrite<Kind extends PassDecision>(
	ledger: readonly Decision[],
	decisions: readonly Kind[],
): Kind[] {
	const written = new Set<number>();
	for (const decision of ledger)
		if (decision.kind !== "checkpoint" && decision.spill) written.add(decision.spill.position);
	return decisions.filter((decision) => decision.spill !== undefined && !written.has(decision.spill.position));
}
