import type { Message } from "../llm/types.js";
import type { CheckpointDecision, Decision, Entry } from "./ledger.js";
import { activeCheckpoint, shownEntries } from "./project.js";
import { estimateTokens } from "./tokens.js";

// Summary compaction, the pure part: where the verbatim tail starts, what stays pinned, and the mechanical digest
// that stands in when the model's summary is missing. The summary call itself is the agent's (src/agent/compactor.ts).

export type { CheckpointDecision } from "./ledger.js";

/** The fixed headings of every summary and digest, in order. */
export const SUMMARY_HEADINGS = ["Task", "Decisions", "Files touched", "Current state", "Next steps"] as const;

/** The token budgets of a compaction. */
export interface CompactionBudget {
	/** Estimated tokens the verbatim tail may take (the newest complete exchange is kept even when larger). */
	tailTokens: number;
	/** The first user message is pinned verbatim when it takes at most this many tokens; else it is summarized. */
	pinTokens: number;
}

/**
 * The budgets for a model's window (tokens; 0 = unknown). Tail: 10% of the window, at least 2,000 and at most 64,000
 * tokens, never more than a quarter of the window (a 20K window keeps 2,000, 200K keeps 20,000, 1M keeps 64,000);
 * 8,000 when the window is unknown. Pin: 15% of the window, at most 16,000 (8,000 when unknown), so a pasted log in
 * the first message cannot keep every checkpoint over the window. Pure.
 */
export function compactionBudget(contextWindow: number): CompactionBudget {
	if (!(contextWindow > 0)) return { tailTokens: 8_000, pinTokens: 8_000 };
	const tenth = Math.round(contextWindow * 0.1);
	return {
		tailTokens: Math.min(Math.floor(contextWindow / 4), Math.max(2_000, Math.min(64_000, tenth))),
		pinTokens: Math.min(16_000, Math.floor(contextWindow * 0.15)),
	};
}

/** Where a new checkpoint cuts the transcript. */
export interface CompactionPlan {
	/** Entry index where the verbatim tail starts: a user or assistant message. */
	firstKept: number;
	/** Entries before firstKept kept verbatim ahead of the summary (the first user message), ascending. */
	pinned: number[];
	/** First entry the new summary covers that no summary covered before: 0, or the previous checkpoint's firstKept. */
	foldFrom: number;
	/** The checkpoint in force before this one (its summary is part of what the new one replaces). */
	previous: CheckpointDecision | undefined;
}

const messageTokens = new WeakMap<Message, number>();

/** Estimated tokens of one message as sent (its JSON), remembered per message object. */
function tokensOf(message: Message): number {
	let tokens = messageTokens.get(message);
	if (tokens === undefined) {
		tokens = estimateTokens(JSON.stringify(message));
		messageTokens.set(message, tokens);
	}
	return tokens;
}

/**
 * Plans a checkpoint for the request for `round`. The verbatim tail is the longest run of newest entries within
 * `budget.tailTokens` (counted as shown, replace decisions applied) that starts at a valid cut — but never shorter
 * than the newest complete exchange (the newest assistant message and everything after it). A valid cut is a user
 * or assistant message (never a tool result, and not a user message right after tool results, which carries that
 * round's images) such that no tool result from the cut on answers a call made before it: tool-call pairs are never
 * split. The cut lies after the previous checkpoint's firstKept, so a later checkpoint only ever folds more, and it
 * is never after the newest assistant message, so everything folded was in the last request the model answered.
 * Pinned: the previous checkpoint's pinned entries, or else the first user message when it fits `budget.pinTokens`.
 * Returns undefined when there is nothing to fold (no assistant message yet, or no valid cut that folds at least one
 * entry that is not pinned). Pure.
 */
export function planCompaction(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
	budget: CompactionBudget,
): CompactionPlan | undefined {
	const previous = activeCheckpoint(entries, ledger, round);
	const foldFrom = previous?.firstKept ?? 0;
	let newestAssistant = -1;
	for (let index = entries.length - 1; index >= foldFrom; index--) {
		if (entries[index]?.message.role === "assistant") {
			newestAssistant = index;
			break;
		}
	}
	if (newestAssistant <= foldFrom) return undefined;

	const valid = validCuts(entries);
	const shown = shownEntries(entries, ledger, round);
	const firstUser = entries.findIndex((entry) => entry.message.role === "user");
	const pinnedFor = (cut: number): number[] => {
		if (previous) return previous.pinned.filter((index) => index < cut);
		if (firstUser < 0 || firstUser >= cut) return [];
		return tokensOf(shown[firstUser] as Message) <= budget.pinTokens ? [firstUser] : [];
	};
	const foldsSomething = (cut: number) =>
		cut > foldFrom && cut - foldFrom > pinnedFor(cut).filter((index) => index >= foldFrom).length;

	// The floor: the latest valid cut at or before the newest assistant message.
	let floor = -1;
	for (let cut = newestAssistant; cut > foldFrom; cut--) {
		if (valid[cut]) {
			floor = cut;
			break;
		}
	}
	if (floor < 0 || !foldsSomething(floor)) return undefined;

	// The tail budget: walk back from the end; keep the earliest valid cut that still fits and folds something.
	let firstKept = floor;
	let tail = 0;
	for (let index = entries.length - 1; index > foldFrom; index--) {
		tail += tokensOf(shown[index] as Message);
		if (tail > budget.tailTokens) break;
		if (index < firstKept && valid[index] && foldsSomething(index)) firstKept = index;
	}
	return { firstKept, pinned: pinnedFor(firstKept), foldFrom, previous };
}

/** Per entry: true when a checkpoint may start its verbatim tail there (see planCompaction). */
function validCuts(entries: readonly Entry[]): boolean[] {
	// The assistant message each tool result answers: the latest one before it that made a call with its id.
	const owners = new Array<number>(entries.length).fill(Number.POSITIVE_INFINITY);
	const callers = new Map<string, number>();
	for (const [index, entry] of entries.entries()) {
		const message = entry.message;
		if (message.role === "assistant") for (const call of message.toolCalls) callers.set(call.id, index);
		else if (message.role === "tool") owners[index] = callers.get(message.toolCallId) ?? Number.POSITIVE_INFINITY;
	}
	const valid = new Array<boolean>(entries.length).fill(false);
	let earliestOwner = Number.POSITIVE_INFINITY;
	for (let index = entries.length - 1; index >= 0; index--) {
		earliestOwner = Math.min(earliestOwner, owners[index] as number);
		const message = entries[index]?.message as Message;
		const afterResults = index > 0 && entries[index - 1]?.message.role === "tool";
		const starts = message.role === "assistant" || (message.role === "user" && !afterResults);
		valid[index] = starts && earliestOwner >= index;
	}
	return valid;
}

const MAX_CALLS = 40;
const MAX_FILES = 50;
const LAST_MESSAGES = 4;

/**
 * The stand-in for a summary the model did not write: under the fixed headings, the task (the first user message
 * and the latest prompts), the calls made (tool and short arguments, the newest 40), the files touched (paths of
 * read_file, write_file and edit_file calls), the previous summary clipped, and the last few messages clipped.
 * Covers entries [from, upTo) (from defaults to 0); bounded in size whatever the transcript. Pure.
 */
export function mechanicalDigest(
	entries: readonly Entry[],
	upTo: number,
	options: { from?: number; previous?: string } = {},
): string {
	const start = Math.max(0, options.from ?? 0);
	const end = Math.min(entries.length, Math.max(start, upTo));
	const covered = entries.slice(start, end).map((entry) => entry.message);
	const first = entries.find((entry) => entry.message.role === "user")?.message;

	const prompts = covered.filter((message) => message.role === "user" && message !== first).slice(-3);
	const task = [
		first ? clip(textOf(first), 600) : "(no user message)",
		...prompts.map((message) => `Later: ${clip(textOf(message), 300)}`),
	];

	const calls = covered.flatMap((message) => (message.role === "assistant" ? message.toolCalls : []));
	const shownCalls = calls.slice(-MAX_CALLS).map((call) => `- ${call.name} ${clip(call.arguments, 120)}`);
	const decisions = [
		"No model summary was available: this is a mechanical digest of the folded conversation.",
		calls.length === 0 ? "Calls made: none." : `Calls made (${calls.length}):`,
		...(calls.length > MAX_CALLS ? [`- … ${calls.length - MAX_CALLS} earlier calls`] : []),
		...shownCalls,
	];

	const files = new Map<string, Set<string>>();
	for (const call of calls) {
		const verb = FILE_VERBS[call.name];
		const path = verb ? pathArgument(call.arguments) : undefined;
		if (!verb || path === undefined) continue;
		files.set(path, (files.get(path) ?? new Set()).add(verb));
	}
	const touched = [...files].slice(0, MAX_FILES).map(([path, verbs]) => `- ${path} (${[...verbs].join(", ")})`);
	if (files.size > MAX_FILES) touched.push(`- … ${files.size - MAX_FILES} more`);

	const state = [
		...(options.previous ? [`Earlier summary: ${clip(options.previous, 2000)}`] : []),
		...covered.slice(-LAST_MESSAGES).map((message) => `- ${describe(message)}`),
	];

	const sections: Record<(typeof SUMMARY_HEADINGS)[number], string[]> = {
		Task: task,
		Decisions: decisions,
		"Files touched": touched.length > 0 ? touched : ["none recorded"],
		"Current state": state.length > 0 ? state : ["nothing recorded"],
		"Next steps": [
			"Continue the task from the verbatim messages after this summary; re-read a file before editing it.",
		],
	};
	return SUMMARY_HEADINGS.map((heading) => `## ${heading}\n${sections[heading].join("\n")}`).join("\n\n");
}

const FILE_VERBS: Record<string, string> = { read_file: "read", write_file: "written", edit_file: "edited" };

function pathArgument(raw: string): string | undefined {
	try {
		const value: unknown = JSON.parse(raw);
		if (value && typeof value === "object" && "path" in value && typeof value.path === "string" && value.path !== "")
			return value.path;
	} catch {
		// malformed arguments name no file
	}
	return undefined;
}

function textOf(message: Message): string {
	if (message.role === "assistant") return message.text;
	if (message.role === "tool") return message.content;
	return message.content
		.map((part) => (part.type === "text" ? part.text : part.type === "image-ref" ? part.marker : "[image]"))
		.join(" ");
}

function describe(message: Message): string {
	if (message.role === "tool")
		return `${message.toolName}${message.isError ? " (error)" : ""}: ${clip(textOf(message), 200)}`;
	if (message.role === "assistant") {
		const calls = message.toolCalls.map((call) => call.name).join(", ");
		return `assistant: ${clip(message.text, 200) || "(no text)"}${calls ? ` [calls: ${calls}]` : ""}`;
	}
	return `user: ${clip(textOf(message), 200)}`;
}

/** Whitespace collapsed, at most `max` characters (an ellipsis marks a cut). */
function clip(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	const high = flat.charCodeAt(max - 2);
	const cut = high >= 0xd800 && high <= 0xdbff ? max - 2 : max - 1; // never half a surrogate pair
	return `${flat.slice(0, cut)}…`;
}
