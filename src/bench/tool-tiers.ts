import type { SnipTool } from "../context/snip.js";
import type { Trajectory } from "./trajectory.js";

// The engine asks whether a tool is read-only (it decides how a stale result is snipped: read-only keeps more of
// the head, side-effecting keeps head and tail). Recorded trajectories only carry tool names, so the bench decides per
// name, the same way for every policy:
// - `str_replace_editor` (SWE-agent, OpenHands) both views and edits: read-only when most of its calls in the
//   trajectory are `view`, since the map has one entry per name;
// - otherwise read-only when a word of the name (split at `_`, `-` and camelCase) is one of READ_WORDS: Read, Glob,
//   Grep, WebFetch, TaskOutput, list_dir, find, cat, think…;
// - everything else is side-effecting: bash, shell, execute_bash, Edit, Write, Task, submit, finish, and any name
//   the bench does not recognize (when unsure, assume it changed something).

const READ_WORDS = new Set([
	"read",
	"view",
	"cat",
	"head",
	"tail",
	"grep",
	"glob",
	"find",
	"ls",
	"list",
	"search",
	"fetch",
	"get",
	"show",
	"output",
	"lookup",
	"think",
	"skill",
]);

/** True when a tool of this name only looks (per the rules above, without the `str_replace_editor` vote). */
export function readOnlyByName(name: string): boolean {
	const words = name
		.replace(/([a-z0-9])([A-Z])/g, "$1_$2")
		.toLowerCase()
		.split(/[^a-z0-9]+/);
	return words.some((word) => READ_WORDS.has(word));
}

/** The tools map the engine gets for a trajectory: every tool name called in it, with its tier. Pure. */
export function toolTiers(trajectory: Trajectory): Record<string, SnipTool> {
	const votes = new Map<string, { view: number; calls: number }>();
	for (const entry of trajectory.entries) {
		if (entry.message.role !== "assistant") continue;
		for (const call of entry.message.toolCalls) {
			const vote = votes.get(call.name) ?? { view: 0, calls: 0 };
			vote.calls++;
			if (call.name === "str_replace_editor" && commandOf(call.arguments) === "view") vote.view++;
			votes.set(call.name, vote);
		}
	}
	const tools: Record<string, SnipTool> = {};
	for (const [name, vote] of votes) {
		tools[name] = { readOnly: name === "str_replace_editor" ? vote.view * 2 > vote.calls : readOnlyByName(name) };
	}
	return tools;
}

function commandOf(json: string): unknown {
	try {
		const value: unknown = JSON.parse(json);
		return typeof value === "object" && value !== null ? (value as { command?: unknown }).command : undefined;
	} catch {
		return undefined;
	}
}
