import { utf8Bytes } from "../llm/text.js";
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from "../llm/types.js";
import type {
	ArgumentsDecision,
	CheckpointDecision,
	Decision,
	Entry,
	PassDecision,
	ReplaceDecision,
} from "./ledger.js";
import { withShownArguments } from "./placeholders.js";
import { repairTranscript } from "./transcript.js";

// The projection: transcript ⊕ ledger → the messages of one request. Pure: the result depends only on the
// arguments. Work is remembered per transcript array so that building round N+1 after round N only looks at the
// entries and decisions appended since; a different array, a shorter one or an earlier round starts afresh.
// Both arrays are append-only: an element once passed must never change.

/** Which decision each entry shows, extended in place as the transcript and the ledger grow. */
interface Build {
	ledger: readonly Decision[];
	round: number;
	entryCount: number;
	decisionCount: number;
	/** Ledger indices not applicable yet: taken after `round`, or for an entry beyond `entryCount`. */
	waiting: number[];
	/** Per entry, the ledger index of the decision it shows (-1: the original). */
	chosen: number[];
	/** Per entry, the message as the model sees it. */
	rendered: Message[];
	/** UTF-8 bytes of tool-result text as shown, counting only the entries the request shows. */
	liveBytes: number;
	/** Ledger index of the checkpoint in force (-1: none): the latest applicable one in ledger order. */
	checkpoint: number;
	/** The pinned entries of that checkpoint that exist and lie before its firstKept, ascending. */
	pinned: number[];
}

const builds = new WeakMap<readonly Entry[], Build>();
const originalSizes = new WeakMap<Entry, number>();
const placeholderSizes = new WeakMap<ReplaceDecision, number>();
const renderedMessages = new WeakMap<Entry, { decision: PassDecision; message: Message }>();
const summaryMessages = new WeakMap<CheckpointDecision, UserMessage>();

/** The fixed first line inside the summary message. */
export const SUMMARY_LEAD = "Earlier conversation, compacted into this summary (the messages after it are verbatim):";

/**
 * The messages of the request for `round`: each entry's message, with the text of every replaced tool result
 * swapped for its placeholder (role, call id, tool name and error flag stay), then repairTranscript.
 * With a checkpoint in force (the latest one in ledger order whose round is at most `round` and whose firstKept
 * is within the transcript), the entries before its firstKept are left out except its pinned ones, and one user
 * message carrying its summary ({@link summaryMessage}) stands between the pinned entries and the rest.
 * Which decision applies: of the entry's decisions taken at or before `round` whose placeholder is smaller than the
 * original text, the one with the smallest placeholder (the earliest in the ledger among equals). That is reading
 * the ledger in order, a decision superseding the one before only when its placeholder is smaller; so a decision
 * never grows the request.
 * An arguments decision applies the same way to an assistant message whose calls it matches one for one: the
 * calls show its arguments (text, ids and names stay), the smallest by bytesAfter winning.
 * Other decisions for unknown entries or entries of another kind are ignored. Never mutates its input;
 * returns a new array (replaced messages are frozen and shared between calls).
 */
export function project(entries: readonly Entry[], ledger: readonly Decision[], round: number): Message[] {
	const state = build(entries, ledger, round);
	const checkpoint = state.checkpoint < 0 ? undefined : (state.ledger[state.checkpoint] as CheckpointDecision);
	if (!checkpoint) return repairTranscript(state.rendered);
	return repairTranscript([
		...state.pinned.map((index) => state.rendered[index] as Message),
		summaryMessage(checkpoint),
		...state.rendered.slice(checkpoint.firstKept),
	]);
}

/** The checkpoint in force in the request for `round`, if any (see {@link project}). */
export function activeCheckpoint(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
): CheckpointDecision | undefined {
	const state = build(entries, ledger, round);
	return state.checkpoint < 0 ? undefined : (state.ledger[state.checkpoint] as CheckpointDecision);
}

/**
 * Per entry, its message as the request for `round` would show it if it were shown: replace decisions applied,
 * checkpoints ignored (entries a checkpoint folds are still listed). Shared, frozen; do not mutate.
 */
export function shownEntries(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
): readonly Message[] {
	return build(entries, ledger, round).rendered;
}

/**
 * The one user message a checkpoint shows its summary as: `<compaction-summary>`, a fixed lead line, the summary,
 * `</compaction-summary>`. The same object for the same decision (frozen).
 */
export function summaryMessage(checkpoint: CheckpointDecision): UserMessage {
	let message = summaryMessages.get(checkpoint);
	if (!message) {
		const text = `<compaction-summary>\n${SUMMARY_LEAD}\n\n${checkpoint.summary}\n</compaction-summary>`;
		message = Object.freeze({
			role: "user",
			content: Object.freeze([Object.freeze({ type: "text", text })]),
		}) as UserMessage;
		summaryMessages.set(checkpoint, message);
	}
	return message;
}

/** Per entry, the replace decision it shows in the request for `round` (undefined: the original, or not a result). */
export function currentDecisions(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
): (ReplaceDecision | undefined)[] {
	return build(entries, ledger, round).chosen.map((index) => {
		const decision = index < 0 ? undefined : (ledger[index] as PassDecision);
		return decision?.kind === "replace" ? decision : undefined;
	});
}

/** Per entry, the decision it shows in the request for `round`: a replaced result or elided arguments. */
export function shownDecisions(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
): (PassDecision | undefined)[] {
	return build(entries, ledger, round).chosen.map((index) => (index < 0 ? undefined : (ledger[index] as PassDecision)));
}

/**
 * UTF-8 bytes of every tool result's text as shown in the request for `round` (orphans included; results a
 * checkpoint folds away are not shown, so not counted).
 */
export function liveToolResultBytes(entries: readonly Entry[], ledger: readonly Decision[], round: number): number {
	return build(entries, ledger, round).liveBytes;
}

/** UTF-8 bytes of an entry's original text (0 for messages that are not tool results). */
export function originalBytes(entry: Entry): number {
	let size = originalSizes.get(entry);
	if (size === undefined) {
		size = entry.message.role === "tool" ? utf8Bytes(entry.message.content) : 0;
		originalSizes.set(entry, size);
	}
	return size;
}

/** UTF-8 bytes of a decision's placeholder. */
export function placeholderBytes(decision: ReplaceDecision): number {
	let size = placeholderSizes.get(decision);
	if (size === undefined) {
		size = utf8Bytes(decision.placeholder);
		placeholderSizes.set(decision, size);
	}
	return size;
}

function build(entries: readonly Entry[], ledger: readonly Decision[], round: number): Build {
	let state = builds.get(entries);
	const reusable =
		state !== undefined &&
		state.ledger === ledger &&
		round >= state.round &&
		entries.length >= state.entryCount &&
		ledger.length >= state.decisionCount;
	if (!state || !reusable) {
		state = {
			ledger,
			round,
			entryCount: 0,
			decisionCount: 0,
			waiting: [],
			chosen: [],
			rendered: [],
			liveBytes: 0,
			checkpoint: -1,
			pinned: [],
		};
		builds.set(entries, state);
	}
	extend(state, entries, round);
	return state;
}

function extend(state: Build, entries: readonly Entry[], round: number): void {
	// New entries come after any checkpoint's firstKept (a checkpoint waits until its firstKept exists): all shown.
	for (let index = state.entryCount; index < entries.length; index++) {
		const entry = entries[index] as Entry;
		state.chosen.push(-1);
		state.rendered.push(entry.message);
		state.liveBytes += originalBytes(entry);
	}
	state.entryCount = entries.length;
	state.round = round;

	const pending = state.waiting;
	for (let index = state.decisionCount; index < state.ledger.length; index++) pending.push(index);
	state.decisionCount = state.ledger.length;
	state.waiting = [];
	let checkpointMoved = false;
	for (const index of pending) {
		const decision = state.ledger[index] as Decision;
		if (decision.kind === "checkpoint") {
			if (!Number.isInteger(decision.firstKept) || decision.firstKept < 0) continue;
			if (decision.round > round || decision.firstKept > entries.length) state.waiting.push(index);
			else if (index > state.checkpoint) {
				state.checkpoint = index;
				checkpointMoved = true;
			}
			continue;
		}
		if (!Number.isInteger(decision.entry) || decision.entry < 0) continue;
		if (decision.round > round || decision.entry >= entries.length) {
			state.waiting.push(index);
			continue;
		}
		const entry = entries[decision.entry] as Entry;
		if (decision.kind === "arguments") {
			applyArguments(state, entry, decision, index);
			continue;
		}
		if (decision.kind !== "replace" || entry.message.role !== "tool") continue;
		const current = state.chosen[decision.entry] as number;
		const shown = current < 0 ? originalBytes(entry) : placeholderBytes(state.ledger[current] as ReplaceDecision);
		const size = placeholderBytes(decision);
		if (size > shown || (size === shown && (current < 0 || index > current))) continue;
		state.chosen[decision.entry] = index;
		state.rendered[decision.entry] = render(entry, decision);
		if (!checkpointMoved && shownInRequest(state, decision.entry)) state.liveBytes += size - shown;
	}
	if (checkpointMoved) recount(state, entries);
}

/** True when the request shows entry `index`: no checkpoint, or pinned by it, or at or after its firstKept. */
function shownInRequest(state: Build, index: number): boolean {
	if (state.checkpoint < 0) return true;
	const checkpoint = state.ledger[state.checkpoint] as CheckpointDecision;
	return index >= checkpoint.firstKept || state.pinned.includes(index);
}

/** After the checkpoint in force changed: its pinned entries, and live bytes summed over the entries shown. */
function recount(state: Build, entries: readonly Entry[]): void {
	const checkpoint = state.ledger[state.checkpoint] as CheckpointDecision;
	const pinned = Array.isArray(checkpoint.pinned) ? checkpoint.pinned : [];
	state.pinned = [...new Set(pinned)]
		.filter((index) => Number.isInteger(index) && index >= 0 && index < checkpoint.firstKept)
		.sort((a, b) => a - b);
	let live = 0;
	for (let index = 0; index < state.entryCount; index++) {
		if (!shownInRequest(state, index)) continue;
		const chosen = state.chosen[index] as number;
		const decision = chosen < 0 ? undefined : (state.ledger[chosen] as PassDecision);
		live += decision?.kind === "replace" ? placeholderBytes(decision) : originalBytes(entries[index] as Entry);
	}
	state.liveBytes = live;
}

/** Applies an arguments decision to an assistant entry when it matches the calls and shows fewer bytes. */
function applyArguments(state: Build, entry: Entry, decision: ArgumentsDecision, index: number): void {
	const message = entry.message;
	if (message.role !== "assistant" || !Array.isArray(decision.arguments)) return;
	if (decision.arguments.length !== message.toolCalls.length) return;
	if (!decision.arguments.every((text) => typeof text === "string")) return;
	const current = state.chosen[decision.entry] as number;
	if (current >= 0) {
		const shown = (state.ledger[current] as ArgumentsDecision).bytesAfter;
		if (decision.bytesAfter > shown || (decision.bytesAfter === shown && index <= current)) return;
	}
	state.chosen[decision.entry] = index;
	state.rendered[decision.entry] = render(entry, decision);
}

function render(entry: Entry, decision: PassDecision): Message {
	const known = renderedMessages.get(entry);
	if (known?.decision === decision) return known.message;
	let message: Message;
	if (decision.kind === "arguments") {
		message = withShownArguments(entry.message as AssistantMessage, decision.arguments);
	} else {
		message = Object.freeze({ ...(entry.message as ToolResultMessage), content: decision.placeholder });
	}
	renderedMessages.set(entry, { decision, message });
	return message;
}
