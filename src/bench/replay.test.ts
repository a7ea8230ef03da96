import { describe, expect, it } from "vitest";
import { filler, longSession, toolTurn, trajectoryOf } from "../../test/support/bench-trajectories.js";
import { PRICE_SHEETS, type RequestSegments } from "../context/cost.js";
import { prunePlaceholder } from "../context/placeholders.js";
import { BENCH_POLICIES, benchSettings } from "./bench-policies.js";
import { prepareReplay, type RequestFigures, replayPolicy } from "./replay.js";
import { messageSegment } from "./request-segments.js";
import { TOOL_SCHEMAS } from "./tool-schemas.js";
import { toolTiers } from "./tool-tiers.js";

const anthropic = { sheet: PRICE_SHEETS.anthropic };

function replay(settings: Parameters<typeof benchSettings>[0]["settings"], rounds = 10) {
	const context = prepareReplay(trajectoryOf(longSession(rounds)), anthropic);
	const sent: RequestSegments[] = [];
	const run = replayPolicy(context, "test", benchSettings({ name: "test", settings }), (_, segments) => {
		sent.push(segments);
	});
	return { run, sent };
}

describe("replay", () => {
	it("sends every request with the tool schemas and the system prompt first, and prices append-only history as cached", () => {
		const { run, sent } = replay({ policy: "off" });
		expect(run.requests).toHaveLength(11);
		for (const segments of sent) expect(segments.slice(0, 2)).toEqual([TOOL_SCHEMAS, "You are a coding agent."]);
		const [first, second] = run.requests as [RequestFigures, RequestFigures];
		expect(first).toMatchObject({ cacheRead: 0, cacheWrite: first.tokens, rewrite: false });
		// request 2 reads all of request 1 from the cache and writes only what was appended
		expect(second.cacheRead).toBe(first.tokens);
		expect(second.cacheWrite).toBe(second.tokens - first.tokens);
		expect(run.requests.every((request) => !request.rewrite)).toBe(true);
	});

	it("prices the requests the engine builds: changing keepToolRounds 6 → 2 changes them", () => {
		const six = replay({ policy: "rounds", keepToolRounds: 6 });
		const two = replay({ policy: "rounds", keepToolRounds: 2 });
		expect(two.run.requests.map((request) => request.tokens)).not.toEqual(
			six.run.requests.map((request) => request.tokens),
		);
		// they first differ at request 4, where the first tool round falls out of the last 2 (three rounds are done)
		const differs = two.run.requests.findIndex((request, index) => request.tokens !== six.run.requests[index]?.tokens);
		expect(differs + 1).toBe(4);
		// the bytes are the engine's own placeholder, with the virtual spill path snowpea would send
		const placeholder = prunePlaceholder("bash", filler("step1", 60).length, "/bench/spill/0000.txt");
		// segments: tool schemas, system, task, assistant 1, its result, …
		const pruned = JSON.parse(two.sent[3]?.[4] ?? "null");
		expect(pruned).toMatchObject({ role: "tool", toolName: "bash", content: placeholder });
		expect(six.sent[3]?.[4]).toBe(messageSegment(trajectoryOf(longSession(10)).entries[2]?.message as never));
		expect(two.run.requests[3]?.rewrite).toBe(true);
		expect(two.run.requests[3]?.tokens).toBeLessThan(six.run.requests[3]?.tokens as number);
	});

	it("spaces requests by the trajectory's own times: a gap past the TTL misses the cache", () => {
		const lines = longSession(3);
		let stamp = 1_000;
		for (const line of lines) {
			if (line.role !== "assistant") continue;
			line.timestamp = stamp;
			stamp += line.tool_calls?.[0]?.id === "call_2" ? 400 : 10;
		}
		const context = prepareReplay(trajectoryOf(lines), anthropic);
		expect(context.times).toEqual([0, 10, 410, 420]);
		const run = replayPolicy(context, "off", benchSettings({ name: "off", settings: { policy: "off" } }));
		expect(run.requests.map((request) => request.cacheRead > 0)).toEqual([false, true, false, true]);
	});

	it("gives every bench policy a full engine configuration spilling to the virtual directory", () => {
		for (const policy of BENCH_POLICIES) {
			const settings = benchSettings(policy, 123_000);
			expect(settings).toMatchObject({ spillDir: "/bench/spill", spillAvailable: true, contextWindow: 123_000 });
			expect(settings.policy).toBe(policy.settings.policy);
		}
		expect(benchSettings(BENCH_POLICIES[2] as never)).toMatchObject({
			historyBudgetBytes: 60_000,
			historyBudgetLowBytes: 30_000,
			keepRecentResults: 3,
		});
	});
});

describe("tool tiers", () => {
	it("decides read-only per name, str_replace_editor by what most of its calls do", () => {
		const lines = [
			{ role: "user", content: "task" },
			...toolTurn("1", "str_replace_editor", { command: "view", path: "a.py" }, "x"),
			...toolTurn("2", "str_replace_editor", { command: "view", path: "b.py" }, "x"),
			...toolTurn("3", "str_replace_editor", { command: "str_replace", path: "a.py" }, "x"),
			...toolTurn("4", "Read", { file_path: "a.py" }, "x"),
			...toolTurn("5", "TaskOutput", {}, "x"),
			...toolTurn("6", "execute_bash", { command: "ls" }, "x"),
			...toolTurn("7", "Edit", {}, "x"),
			...toolTurn("8", "Task", {}, "x"),
			...toolTurn("9", "mystery", {}, "x"),
		];
		expect(toolTiers(trajectoryOf(lines))).toEqual({
			str_replace_editor: { readOnly: true },
			Read: { readOnly: true },
			TaskOutput: { readOnly: true },
			execute_bash: { readOnly: false },
			Edit: { readOnly: false },
			Task: { readOnly: false },
			mystery: { readOnly: false },
		});
		lines.push(...toolTurn("10", "str_replace_editor", { command: "create", path: "c.py" }, "x"));
		expect(toolTiers(trajectoryOf(lines)).str_replace_editor).toEqual({ readOnly: false });
	});
});
