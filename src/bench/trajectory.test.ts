import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonl, toolTurn } from "../../test/support/bench-trajectories.js";
import { tempDir } from "../../test/support/cli.js";
import { defaultCorpusDirectory, describeProblem, loadTrajectories, parseTrajectory } from "./trajectory.js";

const good = jsonl([
	{ role: "system", content: "You are an agent." },
	{ role: "user", content: "Fix bug 1234." },
	...toolTurn("c1", "bash", { command: "ls" }, "a.py\nb.py", "Looking."),
	{ role: "user", content: "Also check b.py." },
	{
		role: "assistant",
		content: null,
		tool_calls: [
			{ id: "c2", name: "Read", arguments: '{"path":"a.py"}' },
			{ id: "c3", name: "Read", arguments: '{"path":"b.py"}' },
		],
	},
	{ role: "tool", content: "print(1)", tool_call_id: "c2" },
	{ role: "tool", content: "print(2)", tool_call_id: "c3", name: "Read" },
	{ role: "assistant", content: "Done." },
]);

describe("loading trajectories", () => {
	it("converts roles to canonical messages and numbers rounds by assistant message", () => {
		const parsed = parseTrajectory(good, "good.jsonl");
		if (!parsed.ok) throw new Error(parsed.problem.message);
		const { system, entries, assistants } = parsed.trajectory;
		expect(system).toBe("You are an agent.");
		expect(entries.map((entry) => [entry.message.role, entry.round])).toEqual([
			["user", 1],
			["assistant", 1],
			["tool", 1],
			["user", 1],
			["assistant", 2],
			["tool", 2],
			["tool", 2],
			["assistant", 3],
		]);
		expect(assistants).toEqual([1, 4, 7]);
		expect(entries[0]?.message).toEqual({ role: "user", content: [{ type: "text", text: "Fix bug 1234." }] });
		expect(entries[4]?.message).toEqual({
			role: "assistant",
			text: "",
			toolCalls: [
				{ id: "c2", name: "Read", arguments: '{"path":"a.py"}' },
				{ id: "c3", name: "Read", arguments: '{"path":"b.py"}' },
			],
		});
		// a tool message without a name takes its call's name
		expect(entries[5]?.message).toEqual({
			role: "tool",
			toolCallId: "c2",
			toolName: "Read",
			content: "print(1)",
			isError: false,
		});
		expect(parsed.trajectory.times).toBeUndefined();
	});

	it.each([
		["not JSON", '{"role": "user", "content": "hi"', /not valid JSON/],
		["an unknown role", '{"role": "developer", "content": "hi"}', /unknown role "developer"/],
		["content that is not text", '{"role": "user", "content": 42}', /content is not text/],
		["a tool message answering no call", '{"role": "tool", "content": "x", "tool_call_id": "nope"}', /answers no call/],
		["a malformed tool call", '{"role": "assistant", "content": "", "tool_calls": [{"name": "bash"}]}', /string id/],
	])("names the file and line of %s", (_, line, message) => {
		const text = `${jsonl([{ role: "user", content: "task" }, ...toolTurn("c1", "bash", {}, "out")])}${line}\n`;
		const parsed = parseTrajectory(text, "dir/bad.jsonl");
		expect(parsed.ok).toBe(false);
		if (parsed.ok) return;
		expect(parsed.problem.line).toBe(4);
		expect(parsed.problem.message).toMatch(message);
		expect(describeProblem(parsed.problem)).toMatch(/^dir\/bad\.jsonl:4: /);
	});

	it("rejects a result for a call of an earlier assistant message", () => {
		const text = jsonl([
			{ role: "user", content: "task" },
			...toolTurn("c1", "bash", {}, "out"),
			{ role: "assistant", content: "next" },
			{ role: "tool", content: "late", tool_call_id: "c1" },
		]);
		const parsed = parseTrajectory(text, "late.jsonl");
		expect(parsed.ok ? undefined : parsed.problem.line).toBe(5);
	});

	it("skips a malformed file and loads the rest of a directory, recursively and sorted", () => {
		const root = tempDir("snowpea-bench-load-");
		mkdirSync(join(root, "b"));
		writeFileSync(join(root, "b", "second.jsonl"), good);
		writeFileSync(join(root, "a-first.jsonl"), good);
		writeFileSync(join(root, "b", "broken.jsonl"), `${good}{oops\n`);
		writeFileSync(join(root, "notes.txt"), "not a trajectory");
		const { trajectories, problems } = loadTrajectories([root, join(root, "missing.jsonl")]);
		expect(trajectories.map((trajectory) => trajectory.file)).toEqual(["a-first.jsonl", "b/second.jsonl"]);
		expect(problems.map(describeProblem)).toEqual([
			"b/broken.jsonl:10: not valid JSON",
			`${join(root, "missing.jsonl")}: no such file or directory`,
		]);
	});

	it("takes request times from assistant timestamps when every assistant message has one", () => {
		const text = jsonl([
			{ role: "user", content: "task" },
			{ role: "assistant", content: "one", timestamp: "2026-01-01T10:00:00Z" },
			{ role: "user", content: "more" },
			{ role: "assistant", content: "two", timestamp: "2026-01-01T10:07:30Z" },
		]);
		const parsed = parseTrajectory(text, "timed.jsonl");
		expect(parsed.ok && parsed.trajectory.times).toEqual([0, 450]);
	});

	it("bundles a default corpus that loads cleanly and is attributed file by file", () => {
		const directory = defaultCorpusDirectory();
		const { trajectories, problems } = loadTrajectories([directory]);
		expect(problems).toEqual([]);
		expect(trajectories.map((trajectory) => trajectory.file)).toEqual([
			"claude-code/session-4d5611e5-subagent-a2898e3.jsonl",
			"claude-code/session-ae4a77f8.jsonl",
			"mini-swe-agent/matplotlib__matplotlib-25775.jsonl",
			"mini-swe-agent/scikit-learn__scikit-learn-12682.jsonl",
		]);
		const attribution = readFileSync(join(directory, "ATTRIBUTION.md"), "utf8");
		for (const trajectory of trajectories) expect(attribution).toContain(`\`${trajectory.file}\``);
		const bytes = readdirSync(directory, { recursive: true, encoding: "utf8" })
			.filter((name) => name.endsWith(".jsonl"))
			.reduce((sum, name) => sum + readFileSync(join(directory, name)).length, 0);
		expect(bytes).toBeLessThanOrEqual(1.5e6);
	});
});
