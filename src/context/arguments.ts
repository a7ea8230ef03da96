import { utf8Bytes } from "../llm/text.js";
import type { AssistantMessage, Message, ToolCall } from "../llm/types.js";
import {
	type ArgumentsDecision,
	type Decision,
	type Entry,
	nextSpillPosition,
	type PassDecision,
	spillPath,
} from "./ledger.js";
import { activeCheckpoint, shownDecisions } from "./project.js";
import type { ContextSettings } from "./settings.js";

// A call's arguments outlive its result: the content of a file the model wrote, the old and new text of an edit, a
// long heredoc script. Once every result of a call is stale, its long argument values are stale output of the
// model itself — the file is on disk, the command ran — and go the same way: each is swapped for a one-line note
// that says the call ran with the full text (and, with spilling on, where that text is kept). Everything else of
// the message stays byte for byte: its text, call ids, names, short values and the JSON shape of every call.

/** The note an elided argument value is shown as. Depends only on its arguments. */
export function argumentPlaceholder(lines: number, characters: number, path?: string): string {
	const what = `[snowpea elided this ${lines}-line value (${characters} chars) of an earlier call; the call ran with the full text`;
	return path ? `${what}; saved to ${path}]` : `${what}]`;
}

/** One elided value: which call, where inside its arguments, and its original text. */
export interface ElidedValue {
	call: ToolCall;
	/** JSON path inside the arguments, e.g. `content` or `edits[1].new_string`. */
	path: string;
	text: string;
}

/**
 * The message's arguments with every string value of at least `minCharacters` characters (at any depth, keys never)
 * replaced by {@link argumentPlaceholder}; a call whose arguments are not a JSON object or array, or that has no
 * long value, keeps its exact text. Undefined when nothing would be elided. Pure.
 */
export function elideArguments(
	message: AssistantMessage,
	minCharacters: number,
	spill?: string,
): { arguments: string[]; values: ElidedValue[] } | undefined {
	if (minCharacters <= 0) return undefined;
	const values: ElidedValue[] = [];
	const shown = message.toolCalls.map((call) => {
		let parsed: unknown;
		try {
			parsed = JSON.parse(call.arguments);
		} catch {
			return call.arguments;
		}
		if (typeof parsed !== "object" || parsed === null) return call.arguments;
		const before = values.length;
		const walk = (node: unknown, path: string): unknown => {
			if (typeof node === "string") {
				if (node.length < minCharacters) return node;
				const note = argumentPlaceholder(node.split("\n").length, node.length, spill);
				if (note.length >= node.length) return node;
				values.push({ call, path, text: node });
				return note;
			}
			if (Array.isArray(node)) return node.map((item, index) => walk(item, `${path}[${index}]`));
			if (typeof node === "object" && node !== null) {
				const copy: Record<string, unknown> = {};
				for (const [key, item] of Object.entries(node)) copy[key] = walk(item, path ? `${path}.${key}` : key);
				return copy;
			}
			return node;
		};
		const rewritten = walk(parsed, "");
		return values.length > before ? JSON.stringify(rewritten) : call.arguments;
	});
	return values.length > 0 ? { arguments: shown, values } : undefined;
}

/** The text of an arguments spill file: each elided value under a header naming its call and path. */
export function argumentsSpillText(values: readonly ElidedValue[]): string {
	return values.map((value) => `--- ${value.call.name} (${value.call.id}) ${value.path} ---\n${value.text}\n`).join("");
}

/**
 * `decision` rebuilt without its spill, for when the agent could not write the file: the notes lose the path.
 * Undefined when `message` (the entry it applies to) no longer yields one; then the decision must be dropped. Pure.
 */
export function bareArguments(
	decision: ArgumentsDecision,
	message: Message | undefined,
	minCharacters: number,
): ArgumentsDecision | undefined {
	if (message?.role !== "assistant") return undefined;
	const elided = elideArguments(message, minCharacters);
	if (!elided) return undefined;
	const { spill: _spill, ...rest } = decision;
	return { ...rest, arguments: elided.arguments, bytesAfter: textBytes(elided.arguments) };
}

/** UTF-8 bytes of some texts together. */
function textBytes(texts: readonly string[]): number {
	return texts.reduce((sum, text) => sum + utf8Bytes(text), 0);
}

/**
 * The arguments decisions a pass adds once `decisions` are applied: for every assistant message the request shows
 * (not folded by a checkpoint) that has no arguments decision yet and whose calls all have results that are gone —
 * replaced before this pass or by `decisions` (not by a skill reload marker), or in `stale`: results the policy counts
 * as stale but left as they are because they are smaller than any placeholder (a write's "wrote 2400 bytes") — with
 * at least one long value to elide. With spilling on, each takes the next spill position after those `decisions` and
 * the ledger use. Returns `decisions` and the new ones together, ordered by entry. `settings.elideArgumentChars` 0
 * turns it off. Pure.
 */
export function withArgumentDecisions(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
	settings: ContextSettings,
	decisions: readonly PassDecision[],
	stale: ReadonlySet<number> = new Set(),
): PassDecision[] {
	const minimum = settings.elideArgumentChars;
	if (minimum <= 0) return [...decisions];
	const shown = shownDecisions(entries, ledger, round);
	const replaced = new Set<number>(stale);
	// A skill body's reload marker follows its own lifecycle (skill-markers.ts), outside any policy: it does not count.
	const counts = (decision: PassDecision | undefined) => decision?.kind === "replace" && decision.reason !== "skill";
	for (const [index, decision] of shown.entries()) if (counts(decision)) replaced.add(index);
	let next = nextSpillPosition(ledger);
	for (const decision of decisions) {
		if (counts(decision)) replaced.add(decision.entry);
		if (decision.spill) next = Math.max(next, decision.spill.position + 1);
	}
	const spilling = settings.spillDir !== "off" && settings.spillAvailable;
	const added: ArgumentsDecision[] = [];
	const from = activeCheckpoint(entries, ledger, round)?.firstKept ?? 0;
	for (let index = from; index < entries.length; index++) {
		const message = (entries[index] as Entry).message;
		if (message.role !== "assistant" || message.toolCalls.length === 0 || shown[index] !== undefined) continue;
		if (!allResultsReplaced(entries, index, message, replaced)) continue;
		const path = spilling ? spillPath(settings.spillDir, next) : undefined;
		const elided = elideArguments(message, minimum, path);
		if (!elided) continue;
		if (spilling) next++;
		added.push({
			kind: "arguments",
			round,
			entry: index,
			arguments: elided.arguments,
			bytesBefore: textBytes(message.toolCalls.map((call) => call.arguments)),
			bytesAfter: textBytes(elided.arguments),
			...(path ? { spill: { position: next - 1, path } } : {}),
		});
	}
	return [...decisions, ...added].sort((a, b) => a.entry - b.entry);
}

/** True when every call of the assistant message at `index` has a result among the entries after it, all replaced. */
function allResultsReplaced(
	entries: readonly Entry[],
	index: number,
	message: AssistantMessage,
	replaced: ReadonlySet<number>,
): boolean {
	const open = new Set(message.toolCalls.map((call) => call.id));
	for (let position = index + 1; position < entries.length && open.size > 0; position++) {
		const next = (entries[position] as Entry).message;
		if (next.role === "assistant") break;
		if (next.role !== "tool" || !open.has(next.toolCallId)) continue;
		if (!replaced.has(position)) return false;
		open.delete(next.toolCallId);
	}
	return open.size === 0;
}
