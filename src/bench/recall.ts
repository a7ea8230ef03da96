import type { PassDecision } from "../context/ledger.js";
import type { Message } from "../llm/types.js";
import type { Trajectory } from "./trajectory.js";

// Cost alone rewards deleting everything, so the bench also measures what a policy keeps: for each assistant
// message, the distinctive tokens it used that it could only have learnt from earlier tool output, and how many of
// them were still in the request it answered. The agent's actions are held fixed, so this is a proxy: a token that is
// gone might have been re-read, or never needed.

/**
 * The distinctive tokens of a text: maximal runs of `[A-Za-z0-9_./-]`, trimmed of leading and trailing `.`, `/` and
 * `-`, of at least 4 characters that look like an identifier, path or number — containing `/`, `_`, or a `.` between
 * word characters (paths, file names, dotted names, versions), a digit (numbers of 4+ digits, hashes, ids), or an
 * uppercase letter inside the word (camelCase, PascalCase with two capitals). The parts of a run between `/` (or,
 * without `/`, between `.`) that qualify on their own are tokens too: `./src/auth_utils.py` gives
 * `src/auth_utils.py`, `auth_utils.py` and `auth_utils`. Plain words (`return`, `Header`, `src`) are not
 * distinctive. Pure.
 */
export function distinctiveTokens(text: string): Set<string> {
	const tokens = new Set<string>();
	for (const match of text.matchAll(RUN)) addRun(match[0], tokens);
	return tokens;
}

const RUN = /[A-Za-z0-9_./-]{4,}/g;

function addRun(raw: string, tokens: Set<string>): void {
	const run = raw.replace(/^[./-]+|[./-]+$/g, "");
	if (run.length < 4) return;
	if (qualifies(run)) tokens.add(run);
	if (run.includes("/")) for (const part of run.split("/")) addRun(part, tokens);
	else if (run.includes(".")) for (const part of run.split(".")) addRun(part, tokens);
}

function qualifies(run: string): boolean {
	return /[/_]|\w\.\w|\d|[a-z][A-Z]|[A-Z]{2}[a-z]/.test(run);
}

/** Every string inside a JSON text (keys excluded), or the text itself when it is not JSON. */
function argumentStrings(json: string): string[] {
	let value: unknown;
	try {
		value = JSON.parse(json);
	} catch {
		return [json];
	}
	const found: string[] = [];
	const walk = (node: unknown) => {
		if (typeof node === "string") found.push(node);
		else if (Array.isArray(node)) for (const item of node) walk(item);
		else if (typeof node === "object" && node !== null) for (const item of Object.values(node)) walk(item);
	};
	walk(value);
	return found;
}

/** The text of a message the model reads: user text, assistant text and call arguments, or a tool result. */
function textsOf(message: Message): string[] {
	switch (message.role) {
		case "user":
			return message.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
		case "assistant":
			return [message.text, ...message.toolCalls.flatMap((call) => argumentStrings(call.arguments))];
		case "tool":
			return [message.content];
	}
}

function tokensOfMessage(message: Message): Set<string> {
	const tokens = new Set<string>();
	for (const text of textsOf(message)) for (const token of distinctiveTokens(text)) tokens.add(token);
	return tokens;
}

/** What recall needs of one trajectory, computed once and shared by every policy. */
export interface RecallIndex {
	/** Per request k (index k − 1): the tokens assistant message k used that earlier tool output supplied. */
	turns: readonly (readonly string[])[];
	/** Per needed token: the entries (ascending) whose original text contains it. */
	postings: ReadonlyMap<string, readonly number[]>;
	/** Entry index of each assistant message (as in the trajectory). */
	assistants: readonly number[];
	/** The original message of every entry. */
	messages: readonly Message[];
}

/**
 * Indexes a trajectory. The tokens counted for assistant message k are the distinctive tokens of its text and of the
 * string values in its call arguments that occur in an earlier tool result and in neither the system prompt nor the
 * task (every user message before the first assistant message). Pure.
 */
export function buildRecallIndex(trajectory: Trajectory): RecallIndex {
	const { entries, assistants } = trajectory;
	const excluded = distinctiveTokens(trajectory.system);
	const firstAssistant = assistants[0] ?? entries.length;
	for (const entry of entries.slice(0, firstAssistant)) {
		if (entry.message.role === "user") for (const token of tokensOfMessage(entry.message)) excluded.add(token);
	}
	const perEntry = entries.map((entry) => tokensOfMessage(entry.message));
	const fromTools = new Set<string>();
	const turns: string[][] = [];
	let next = 0;
	for (const position of assistants) {
		for (; next < position; next++) {
			if (entries[next]?.message.role === "tool")
				for (const token of perEntry[next] as Set<string>) fromTools.add(token);
		}
		const used: string[] = [];
		for (const token of perEntry[position] as Set<string>) {
			if (fromTools.has(token) && !excluded.has(token)) used.push(token);
		}
		turns.push(used);
	}
	const needed = new Set(turns.flat());
	const postings = new Map<string, number[]>();
	for (const [index, tokens] of perEntry.entries()) {
		for (const token of tokens) {
			if (!needed.has(token)) continue;
			const list = postings.get(token);
			if (list) list.push(index);
			else postings.set(token, [index]);
		}
	}
	return { turns, postings, assistants, messages: entries.map((entry) => entry.message) };
}

/** Tokens kept and counted in one request. */
export interface RecallCount {
	kept: number;
	total: number;
	/**
	 * The entries the agent would have had to read again for the tokens that were gone: per missing token, the newest
	 * entry before the request whose original text held it (ascending, each once).
	 */
	missing: number[];
}

const placeholderTokens = new WeakMap<PassDecision, Set<string>>();

/**
 * Recall of request k (1-based): how many of the tokens counted for assistant message k are still present in the
 * request, given what each entry shows (`shown[e]`: the decision entry e shows, undefined for its original text).
 * A token is present when some entry before assistant message k that contained it still shows it: in its original
 * text, or inside the placeholder that replaced it (a snip keeps head and tail), or — for a message whose long
 * call arguments were elided — in its text or the arguments it still shows. Words a placeholder or an elision note
 * adds of its own (tool names, spill paths) do not count as kept information. Pure (placeholder tokens are memoized per decision).
 */
export function recallOfRequest(
	index: RecallIndex,
	request: number,
	shown: readonly (PassDecision | undefined)[],
): RecallCount {
	const tokens = index.turns[request - 1] ?? [];
	const limit = index.assistants[request - 1] ?? 0;
	let kept = 0;
	const missing = new Set<number>();
	for (const token of tokens) {
		let found = false;
		let newest = -1;
		for (const entry of index.postings.get(token) ?? []) {
			if (entry >= limit) break;
			newest = entry;
			const decision = shown[entry];
			if (decision === undefined || tokensOfPlaceholder(decision, index.messages[entry] as Message).has(token)) {
				found = true;
				break;
			}
		}
		if (found) kept++;
		else if (newest >= 0) missing.add(newest);
	}
	return { kept, total: tokens.length, missing: [...missing].sort((a, b) => a - b) };
}

function tokensOfPlaceholder(decision: PassDecision, message: Message): Set<string> {
	let tokens = placeholderTokens.get(decision);
	if (!tokens) {
		tokens = new Set<string>();
		const texts =
			decision.kind === "replace"
				? [decision.placeholder]
				: [message.role === "assistant" ? message.text : "", ...decision.arguments.flatMap(argumentStrings)];
		for (const text of texts) for (const token of distinctiveTokens(text)) tokens.add(token);
		placeholderTokens.set(decision, tokens);
	}
	return tokens;
}

/** kept ÷ total, and 1 when nothing was counted (nothing could be lost). */
export function recallShare(count: RecallCount): number {
	return count.total === 0 ? 1 : count.kept / count.total;
}
