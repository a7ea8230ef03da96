import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../tools/tool.js";
import {
	type ChildReport,
	type ChildRequest,
	createDelegateTool,
	REPORT_INLINE_MAX_BYTES,
	Semaphore,
	type SpawnChild,
} from "./delegate.js";
import { BUILTIN_ROLES } from "./roles.js";

const usage = { input: 1200, output: 80, cacheRead: 1000, cacheWrite: 0, requests: 2 };

function context(signal = new AbortController().signal): ToolContext {
	const home = mkdtempSync(join(tmpdir(), "snowpea-delegate-"));
	return { cwd: home, home, sessionId: "parent", callId: "call_1", signal, spillDir: join(home, "spill") };
}

function report(overrides: Partial<ChildReport> = {}): ChildReport {
	return {
		status: "done",
		report: "found it in src/a.ts:3",
		rounds: 2,
		usage,
		childSessionId: "child-1",
		...overrides,
	};
}

/** A spawn whose children run until the test finishes them, recording the order children start and end in. */
function controlledSpawn() {
	const log: string[] = [];
	const pending = new Map<string, (value: ChildReport) => void>();
	let running = 0;
	let most = 0;
	const spawn: SpawnChild = (request) =>
		new Promise((resolve) => {
			running++;
			most = Math.max(most, running);
			log.push(`start ${request.task}`);
			pending.set(request.task, (value) => {
				running--;
				log.push(`end ${request.task}`);
				resolve(value);
			});
		});
	return {
		spawn,
		log,
		pending,
		most: () => most,
		finish: (task: string) => pending.get(task)?.(report({ report: `report of ${task}` })),
	};
}

/** Lets every queued promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const roles = () => BUILTIN_ROLES;

describe("delegate_task concurrency", () => {
	it("with maxConcurrent 2, four calls never run more than 2 children at once, and all four finish", async () => {
		const children = controlledSpawn();
		const tool = createDelegateTool(children.spawn, { maxConcurrent: 2, roles });
		const calls = ["a", "b", "c", "d"].map((task) =>
			tool.execute(JSON.stringify({ task, agent: "explore" }), context()),
		);
		await settle();
		expect(children.log).toEqual(["start a", "start b"]);
		children.finish("b");
		await settle();
		expect(children.log).toEqual(["start a", "start b", "end b", "start c"]);
		children.finish("a");
		await settle();
		children.finish("c");
		await settle();
		children.finish("d");
		const results = await Promise.all(calls);
		expect(children.most()).toBe(2);
		expect(children.log).toEqual(["start a", "start b", "end b", "start c", "end a", "start d", "end c", "end d"]);
		expect(results.map((result) => result.content.split("\n").at(-1))).toEqual([
			"report of a",
			"report of b",
			"report of c",
			"report of d",
		]);
	});

	it("children that may write run one at a time, while read-only ones run alongside them", async () => {
		const children = controlledSpawn();
		const tool = createDelegateTool(children.spawn, { maxConcurrent: 3, roles });
		const call = (task: string, agent: string) => tool.execute(JSON.stringify({ task, agent }), context());
		const calls = [call("w1", "executor"), call("w2", "executor"), call("r1", "explore"), call("r2", "reviewer")];
		await settle();
		expect([...children.log].sort()).toEqual(["start r1", "start r2", "start w1"]);
		children.finish("r1");
		await settle();
		// a free general slot does not let the second writer in while the first one runs
		expect(children.log.slice(3)).toEqual(["end r1"]);
		children.finish("w1");
		await settle();
		expect(children.log.slice(-2)).toEqual(["end w1", "start w2"]);
		children.finish("w2");
		children.finish("r2");
		expect((await Promise.all(calls)).every((result) => result.ok)).toBe(true);
	});

	it("a writer waiting for the writer slot when the turn aborts is not started and frees nothing it did not take", async () => {
		const children = controlledSpawn();
		const tool = createDelegateTool(children.spawn, { maxConcurrent: 2, roles });
		const running = tool.execute(JSON.stringify({ task: "w1" }), context());
		const controller = new AbortController();
		const waiting = tool.execute(JSON.stringify({ task: "w2" }), context(controller.signal));
		await settle();
		controller.abort();
		expect(await waiting).toMatchObject({ ok: false, errorCode: "aborted" });
		const reader = tool.execute(JSON.stringify({ task: "r1", agent: "explore" }), context());
		await settle();
		expect([...children.log].sort()).toEqual(["start r1", "start w1"]);
		children.finish("w1");
		children.finish("r1");
		await Promise.all([running, reader]);
	});

	it("a call waiting for a slot when the turn aborts is not started", async () => {
		const children = controlledSpawn();
		const tool = createDelegateTool(children.spawn, { maxConcurrent: 1, roles });
		const running = tool.execute(JSON.stringify({ task: "a" }), context());
		const controller = new AbortController();
		const waiting = tool.execute(JSON.stringify({ task: "b" }), context(controller.signal));
		await settle();
		controller.abort();
		const refused = await waiting;
		expect(refused).toMatchObject({ ok: false, errorCode: "aborted" });
		children.finish("a");
		await running;
		expect(children.log).toEqual(["start a", "end a"]);
	});

	it("Semaphore: a slot freed twice is freed once", async () => {
		const slots = new Semaphore(1);
		const release = await slots.acquire();
		release?.();
		release?.();
		const first = await slots.acquire();
		expect(slots.active).toBe(1);
		let second = false;
		void slots.acquire().then(() => {
			second = true;
		});
		await settle();
		expect(second).toBe(false);
		first?.();
		await settle();
		expect(second).toBe(true);
	});
});

describe("delegate_task requests and results", () => {
	it("resolves the role and the budget: the role's default, or max_rounds", async () => {
		const seen: ChildRequest[] = [];
		const tool = createDelegateTool(
			async (request) => {
				seen.push(request);
				return report();
			},
			{ maxConcurrent: 3, roles },
		);
		await tool.execute(JSON.stringify({ task: "find x", agent: "explore", title: "find" }), context());
		await tool.execute(JSON.stringify({ task: "do y", max_rounds: 4, tools: ["read_file"] }), context());
		expect(seen.map((request) => [request.role.name, request.maxRounds, request.title, request.tools])).toEqual([
			["explore", 25, "find", undefined],
			["executor", 4, undefined, ["read_file"]],
		]);
	});

	it("a finished child: status, rounds, token line, session id and the report", async () => {
		const tool = createDelegateTool(async () => report(), { maxConcurrent: 3, roles });
		const result = await tool.execute(JSON.stringify({ task: "find x", agent: "explore" }), context());
		expect(result.ok).toBe(true);
		expect(result.content).toBe(
			[
				"delegate_task explore: done in 2 of 25 rounds",
				"child session child-1; tokens: input 1200 (cache read 1000), output 80, 2 requests",
				"",
				"Report:",
				"found it in src/a.ts:3",
			].join("\n"),
		);
		expect(result.details).toMatchObject({ status: "done", rounds: 2, childSessionId: "child-1", usage });
	});

	it("a partial child is a successful result that says it stopped at its budget", async () => {
		const tool = createDelegateTool(async () => report({ status: "partial", rounds: 3 }), { maxConcurrent: 1, roles });
		const result = await tool.execute(JSON.stringify({ task: "t", max_rounds: 3 }), context());
		expect(result.ok).toBe(true);
		expect(result.content.split("\n")[0]).toBe(
			"delegate_task executor: partial: stopped at its budget of 3 rounds and was asked once for its report",
		);
		expect(result.details?.status).toBe("partial");
	});

	it("a failed child is a failed result with the error", async () => {
		const tool = createDelegateTool(async () => report({ status: "failed", report: "", error: "openai: HTTP 500" }), {
			maxConcurrent: 1,
			roles,
		});
		const result = await tool.execute(JSON.stringify({ task: "t" }), context());
		expect(result).toMatchObject({ ok: false, errorCode: "child_failed" });
		expect(result.content).toContain("failed after 2 rounds: openai: HTTP 500");
		expect(result.content).toContain("The child gave no report.");
	});

	it("a spawn that throws still gives a failed result", async () => {
		const tool = createDelegateTool(
			async () => {
				throw new Error("boom");
			},
			{ maxConcurrent: 1, roles },
		);
		const result = await tool.execute(JSON.stringify({ task: "t" }), context());
		expect(result).toMatchObject({ ok: false, errorCode: "child_failed" });
		expect(result.content).toContain("failed after 0 rounds: boom");
	});

	it("a long report is spilled to a file; the result keeps its head and the path", async () => {
		const long = `${"finding line\n".repeat(1000)}THE END`;
		const tool = createDelegateTool(async () => report({ report: long }), { maxConcurrent: 1, roles });
		const result = await tool.execute(JSON.stringify({ task: "t" }), context());
		const spillPath = result.details?.spillPath as string;
		expect(readFileSync(spillPath, "utf8")).toBe(long);
		expect(result.content).toContain(`the whole text is in ${spillPath}`);
		expect(result.content).not.toContain("THE END");
		expect(Buffer.byteLength(result.content)).toBeLessThan(REPORT_INLINE_MAX_BYTES);
	});

	it("an unknown agent is refused with the known names, and no child starts", async () => {
		let started = false;
		const tool = createDelegateTool(
			async () => {
				started = true;
				return report();
			},
			{ maxConcurrent: 1, roles },
		);
		const result = await tool.execute(JSON.stringify({ task: "t", agent: "wizard" }), context());
		expect(result).toMatchObject({ ok: false, errorCode: "unknown_agent" });
		expect(result.content).toBe('delegate_task: no agent "wizard"; the agents are: explore, reviewer, executor');
		expect(started).toBe(false);
	});

	it("the description lists every role", () => {
		const tool = createDelegateTool(async () => report(), { maxConcurrent: 3, roles });
		for (const role of BUILTIN_ROLES) expect(tool.description).toContain(`- ${role.name}: ${role.description}`);
		expect(tool.readOnly).toBe(true);
	});
});
