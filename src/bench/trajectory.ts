import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Entry } from "../context/ledger.js";
import type { Message, ToolCall } from "../llm/types.js";

// Recorded agent runs as the bench replays them. The input is normalized JSONL, one message per line:
//   {role: "system"|"user"|"assistant"|"tool", content, tool_calls?: [{id, name, arguments}], tool_call_id?, name?}
// with `arguments` a JSON string. An optional `timestamp` (epoch seconds or milliseconds, or an ISO date) on the
// assistant messages gives the requests their real spacing in time.

/** One recorded trajectory, converted to the engine's canonical entries. */
export interface Trajectory {
	/** Where it came from: relative to the directory it was found in, or the path as given. */
	file: string;
	/** The system prompt: the leading system messages joined by a blank line ("" when there are none). */
	system: string;
	/**
	 * The transcript. Rounds: the entries before the first assistant message are round 1; assistant message k
	 * (1-based) and everything after it up to the next assistant message are round k.
	 */
	entries: Entry[];
	/** Entry index of each assistant message in order: request k is built from entries[0, assistants[k − 1]). */
	assistants: number[];
	/**
	 * Seconds from the first assistant message to assistant message k (index k − 1), present only when every
	 * assistant message carried a timestamp; otherwise the replay spaces requests evenly.
	 */
	times?: number[];
}

/** A line (or file) that could not be used; the trajectory is skipped, never the run. */
export interface TrajectoryProblem {
	file: string;
	/** 1-based line number, absent when the whole file is the problem. */
	line?: number;
	message: string;
}

export type ParsedTrajectory = { ok: true; trajectory: Trajectory } | { ok: false; problem: TrajectoryProblem };

/** One line as the problem report shows it: `file:line: message`. */
export function describeProblem(problem: TrajectoryProblem): string {
	return `${problem.file}${problem.line === undefined ? "" : `:${problem.line}`}: ${problem.message}`;
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);

/**
 * Converts the text of one JSONL trajectory. Blank lines are ignored. The first malformed line — not JSON, not an
 * object, an unknown role, content that is not text, a malformed tool call, or a tool message that answers no call of
 * the assistant message before it — makes the whole trajectory a problem naming `file` and the line. System messages
 * after the first non-system message become user messages (agents inject reminders that way). Pure; never throws.
 */
export function parseTrajectory(text: string, file: string): ParsedTrajectory {
	const systemParts: string[] = [];
	const entries: Entry[] = [];
	const assistants: number[] = [];
	const stamps: (number | undefined)[] = [];
	let openCalls = new Map<string, ToolCall>();
	const lines = text.split("\n");
	for (const [index, raw] of lines.entries()) {
		const line = index + 1;
		const fail = (message: string): ParsedTrajectory => ({ ok: false, problem: { file, line, message } });
		if (raw.trim() === "") continue;
		let value: unknown;
		try {
			value = JSON.parse(raw);
		} catch {
			return fail("not valid JSON");
		}
		if (!isRecord(value)) return fail("not a JSON object");
		const role = value.role;
		if (typeof role !== "string" || !ROLES.has(role)) return fail(`unknown role ${JSON.stringify(role)}`);
		const content = textOf(value.content);
		if (content === undefined) return fail(`${role} content is not text`);
		const round = Math.max(1, assistants.length);

		if (role === "system" && entries.length === 0) {
			systemParts.push(content);
			continue;
		}
		if (role === "system" || role === "user") {
			entries.push({ message: { role: "user", content: [{ type: "text", text: content }] }, round });
			continue;
		}
		if (role === "assistant") {
			const calls = toolCallsOf(value.tool_calls);
			if (typeof calls === "string") return fail(calls);
			openCalls = new Map(calls.map((call) => [call.id, call]));
			assistants.push(entries.length);
			stamps.push(secondsOf(value.timestamp));
			entries.push({ message: { role: "assistant", text: content, toolCalls: calls }, round: assistants.length });
			continue;
		}
		const callId = value.tool_call_id;
		if (typeof callId !== "string") return fail("tool message without a tool_call_id");
		const call = openCalls.get(callId);
		if (!call) return fail(`tool message answers no call of the assistant message before it (id ${callId})`);
		openCalls.delete(callId);
		const name = typeof value.name === "string" && value.name !== "" ? value.name : call.name;
		const message: Message = { role: "tool", toolCallId: callId, toolName: name, content, isError: false };
		entries.push({ message, round });
	}
	const trajectory: Trajectory = { file, system: systemParts.join("\n\n"), entries, assistants };
	const first = stamps[0];
	if (first !== undefined && stamps.every((stamp) => stamp !== undefined)) {
		trajectory.times = stamps.map((stamp) => (stamp as number) - first);
	}
	return { ok: true, trajectory };
}

/** What {@link loadTrajectories} found: the usable trajectories in path order, and one problem per skipped file. */
export interface LoadedCorpus {
	trajectories: Trajectory[];
	problems: TrajectoryProblem[];
}

/**
 * Loads files and directories (searched recursively for `*.jsonl`, sorted by path in code-unit order), in the order
 * given. A path that cannot be read, or a malformed trajectory, becomes a problem; the others still load. Never throws.
 */
export function loadTrajectories(paths: readonly string[]): LoadedCorpus {
	const trajectories: Trajectory[] = [];
	const problems: TrajectoryProblem[] = [];
	for (const path of paths) {
		let files: { path: string; name: string }[];
		try {
			files = statSync(path).isDirectory()
				? jsonlFiles(path).map((file) => ({ path: file, name: relative(path, file).split("\\").join("/") }))
				: [{ path, name: path }];
		} catch (error) {
			problems.push({ file: path, message: reason(error) });
			continue;
		}
		for (const file of files) {
			let text: string;
			try {
				text = readFileSync(file.path, "utf8");
			} catch (error) {
				problems.push({ file: file.name, message: reason(error) });
				continue;
			}
			const parsed = parseTrajectory(text, file.name);
			if (parsed.ok) trajectories.push(parsed.trajectory);
			else problems.push(parsed.problem);
		}
	}
	return { trajectories, problems };
}

/** The trajectories bundled with the package (`corpus/` next to `dist/` and `src/`), as an absolute directory. */
export function defaultCorpusDirectory(): string {
	return fileURLToPath(new URL("../../corpus/", import.meta.url));
}

function jsonlFiles(directory: string): string[] {
	const found: string[] = [];
	const walk = (current: string) => {
		for (const entry of readdirSync(current, { withFileTypes: true })) {
			const path = join(current, entry.name);
			if (entry.isDirectory()) walk(path);
			else if (entry.name.endsWith(".jsonl")) found.push(path);
		}
	};
	walk(directory);
	return found.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string, null/absent (""), or a list of `{type: "text", text}` parts joined by newlines; undefined otherwise. */
function textOf(content: unknown): string | undefined {
	if (content === undefined || content === null) return "";
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return undefined;
	const parts: string[] = [];
	for (const part of content) {
		if (typeof part === "string") parts.push(part);
		else if (isRecord(part) && typeof part.text === "string") parts.push(part.text);
		else return undefined;
	}
	return parts.join("\n");
}

/** The calls of an assistant line, or a sentence saying what is wrong with them. */
function toolCallsOf(value: unknown): ToolCall[] | string {
	if (value === undefined || value === null) return [];
	if (!Array.isArray(value)) return "tool_calls is not a list";
	const calls: ToolCall[] = [];
	for (const [position, call] of value.entries()) {
		if (!isRecord(call) || typeof call.id !== "string" || typeof call.name !== "string") {
			return `tool call ${position + 1} needs a string id and name`;
		}
		const args = call.arguments;
		if (args !== undefined && typeof args !== "string" && !isRecord(args)) {
			return `tool call ${position + 1} has arguments that are neither a JSON string nor an object`;
		}
		calls.push({
			id: call.id,
			name: call.name,
			arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
		});
	}
	return calls;
}

/** Seconds since the epoch from a number (seconds, or milliseconds when above 1e11) or a date string. */
function secondsOf(value: unknown): number | undefined {
	if (typeof value === "number" && Number.isFinite(value)) return value > 1e11 ? value / 1000 : value;
	if (typeof value === "string") {
		const parsed = Date.parse(value);
		return Number.isNaN(parsed) ? undefined : parsed / 1000;
	}
	return undefined;
}

function reason(error: unknown): string {
	const code = (error as { code?: string }).code;
	if (code === "ENOENT") return "no such file or directory";
	return error instanceof Error ? error.message : String(error);
}
