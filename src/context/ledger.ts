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
export type ReplaceReason = "prune" | "elide" | "snip" | "mask" | "clear";

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

/** Every kind of ledger decision. Later kinds (checkpoints, tool loads) join this union: switch on `kind`. */
export type Decision = ReplaceDecision;

/** File name of a spill: the position as at least four digits, e.g. `0007.txt`. Nothing else reaches the path. */
export function spillPath(spillDir: string, position: number): string {
	return `${spillDir.replace(/\/+$/, "")}/${String(position).padStart(4, "0")}.txt`;
}

/** The position the next spilled decision gets: one past the highest position in the ledger, 0 for the first. */
export function nextSpillPosition(ledger: readonly Decision[]): number {
	let next = 0;
	for (const decision of ledger) {
		if (decision.kind === "replace" && decision.spill) next = Math.max(next, decision.spill.position + 1);
	}
	return next;
}

/**
 * The decisions among `decisions` whose spill file still has to be written: a replacement of an already snipped
 * result reuses the snip's file, so its position is already in `ledger`. Order is kept.
 */
export function spillsToWrite(ledger: readonly Decision[], decisions: readonly ReplaceDecision[]): ReplaceDecision[] {
	const written = new Set<number>();
	for (const decision of ledger)
		if (decision.kind === "replace" && decision.spill) written.add(decision.spill.position);
	return decisions.filter((decision) => decision.spill !== undefined && !written.has(decision.spill.position));
}
