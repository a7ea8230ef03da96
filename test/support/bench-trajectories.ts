// Hand-made trajectories for the bench tests, written as the normalized JSONL the bench reads.
import { parseTrajectory, type Trajectory } from "../../src/bench/trajectory.js";

export interface Line {
	role: string;
	content: string | null;
	tool_calls?: { id: string; name: string; arguments: string }[];
	tool_call_id?: string;
	name?: string;
	timestamp?: number | string;
}

/** JSONL text of the given lines. */
export function jsonl(lines: readonly Line[]): string {
	return `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
}

/** Parses lines that must be well formed. */
export function trajectoryOf(lines: readonly Line[], file = "hand-made.jsonl"): Trajectory {
	const parsed = parseTrajectory(jsonl(lines), file);
	if (!parsed.ok) throw new Error(`bad fixture: ${parsed.problem.message} (line ${parsed.problem.line})`);
	return parsed.trajectory;
}

/** Deterministic filler text: `lines` numbered lines of about 60 characters, distinct per `seed`. */
export function filler(seed: string, lines: number): string {
	const out: string[] = [];
	for (let index = 0; index < lines; index++) {
		out.push(`${seed} line ${index}: the quick brown fox jumps over the lazy dog again`);
	}
	return out.join("\n");
}

/** One assistant turn that calls `name` with `args`, and the tool's answer `output`. */
export function toolTurn(id: string, name: string, args: Record<string, unknown>, output: string, text = ""): Line[] {
	return [
		{ role: "assistant", content: text, tool_calls: [{ id, name, arguments: JSON.stringify(args) }] },
		{ role: "tool", content: output, tool_call_id: id, name },
	];
}

/**
 * A session of `rounds` tool rounds: a system prompt and a task, then round k runs `bash` printing a large,
 * distinct output (`size` filler lines), and a final plain answer.
 */
export function longSession(rounds: number, size = 60): Line[] {
	const lines: Line[] = [
		{ role: "system", content: "You are a coding agent." },
		{ role: "user", content: "Fix the failing test." },
	];
	for (let round = 1; round <= rounds; round++) {
		lines.push(...toolTurn(`call_${round}`, "bash", { command: `run step ${round}` }, filler(`step${round}`, size)));
	}
	lines.push({ role: "assistant", content: "Done." });
	return lines;
}
