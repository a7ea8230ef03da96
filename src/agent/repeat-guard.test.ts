import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinTools } from "../tools/builtin.js";
import type { Permission, Tool, ToolContext, ToolResult } from "../tools/tool.js";
import { defineTool } from "../tools/tool.js";
import { type GuardedCall, type GuardVerdict, guardedExecute, RepeatGuard } from "./repeat-guard.js";

const BUILTIN = new Map(builtinTools().map((tool) => [tool.name, tool]));

let directory: string;
beforeEach(() => {
	directory = mkdtempSync(join(tmpdir(), "snowpea-guard-"));
});
afterEach(() => {
	rmSync(directory, { recursive: true, force: true });
});

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/** A tool whose answer changes on every call, so only the call-based rules can apply to it. */
function counterTool(
	name: string,
	options: { source?: string; permission?: Permission } = {},
): Tool & { runs: () => number } {
	let runs = 0;
	const tool = defineTool({
		name,
		description: `${name} test tool`,
		parameters: z.object({ q: z.string().optional(), a: z.number().optional(), b: z.number().optional() }),
		permission: options.permission ?? "read",
		readOnly: true,
		source: options.source,
		async run() {
			runs++;
			return { ok: true, content: `${name} answer ${runs}` };
		},
	});
	return Object.assign(tool, { runs: () => runs });
}

/** A tool that always answers the same text. */
function constantTool(name: string, source: string, permission: Permission): Tool & { runs: () => number } {
	let runs = 0;
	const tool = defineTool({
		name,
		description: `${name} test tool`,
		parameters: z.object({ q: z.string() }),
		permission,
		readOnly: permission === "read",
		source,
		async run() {
			runs++;
			return { ok: true, content: "first hit\nsecond hit" };
		},
	});
	return Object.assign(tool, { runs: () => runs });
}

/** A session's guard plus the loop's side of it: call ids, visibility and context. */
function harness(options: { enabled?: boolean } = {}) {
	const guard = new RepeatGuard({ enabled: options.enabled ?? true, cwd: directory });
	const hidden = new Set<string>();
	let next = 0;
	const context = (callId: string): ToolContext => ({
		cwd: directory,
		home: directory,
		sessionId: "session",
		callId,
		signal: new AbortController().signal,
		spillDir: join(directory, ".spill"),
	});
	async function run(
		tool: Tool | string,
		args: unknown,
		isVisible?: (callId: string) => boolean,
	): Promise<GuardVerdict & { id: string }> {
		const resolved = typeof tool === "string" ? (BUILTIN.get(tool) as Tool) : tool;
		const id = `call_${++next}`;
		const call: GuardedCall = {
			id,
			name: resolved.name,
			arguments: typeof args === "string" ? args : JSON.stringify(args),
			source: resolved.source,
		};
		const verdict = await guardedExecute(
			guard,
			resolved,
			call,
			context(id),
			isVisible ?? ((callId) => !hidden.has(callId)),
		);
		return { id, ...verdict };
	}
	/** A call that is different every time, to break streaks. */
	const other = () => run("glob", { pattern: `no-such-file-${next}*` });
	return { guard, hidden, run, other, context };
}

const readStub = (path: string, lines: number, content: string) =>
	`unchanged since your earlier read_file of ${path} (${lines} ${lines === 1 ? "line" : "lines"}, sha256 ${sha(content).slice(0, 8)}); the content in that result is still current`;

describe("the guard's state across processes", () => {
	it("a restored snapshot stubs an unchanged re-read, reads a changed file again, and skips malformed entries", async () => {
		writeFileSync(join(directory, "a.txt"), "one\ntwo\n");
		const before = harness();
		await before.run("read_file", { path: "a.txt" });
		const stored = JSON.parse(JSON.stringify(before.guard.snapshot()));
		expect(before.guard.changes).toBeGreaterThan(0);

		const after = harness();
		after.guard.restore({ ...stored, reads: [...stored.reads, ["bad", { path: 1 }], "junk"], scans: "junk" });
		after.guard.restore(null);
		expect(after.guard.snapshot().reads).toHaveLength(1);
		// the restored read names call_1, visible in the resumed session's transcript
		const again = await after.run("read_file", { path: "a.txt" }, () => true);
		expect(again.result.content).toBe(readStub("a.txt", 2, "one\ntwo\n"));
		writeFileSync(join(directory, "a.txt"), "one\nthree\n");
		await after.other();
		const changed = await after.run("read_file", { path: "a.txt" }, () => true);
		expect(changed.result.content).toContain("three");
	});
});

describe("read_file re-reads", () => {
	it("answers two unchanged re-reads with a stub, then refuses the third", async () => {
		writeFileSync(join(directory, "a.txt"), "one\ntwo\nthree\n");
		const { run, other } = harness();
		const first = await run("read_file", { path: "a.txt" });
		expect(first.result.ok).toBe(true);
		expect(first.result.content).toContain("three");
		await other();
		const second = await run("read_file", { path: "a.txt" });
		await other();
		const third = await run("read_file", { path: "a.txt" });
		await other();
		const fourth = await run("read_file", { path: "a.txt" });
		for (const stub of [second, third]) {
			expect(stub.result.ok).toBe(true);
			expect(stub.result.content).toBe(readStub("a.txt", 3, "one\ntwo\nthree\n"));
		}
		expect(fourth.result.ok).toBe(false);
		expect(fourth.result.errorCode).toBe("repeat_blocked");
		expect(fourth.result.content).toMatch(/^repeat_blocked: STOP calling read_file on a\.txt/);
	});

	it("treats the same file under another spelling (./a.txt, absolute, offset 1) as the same read", async () => {
		writeFileSync(join(directory, "a.txt"), "one\ntwo\n");
		const { run, other } = harness();
		await run("read_file", { path: "a.txt" });
		const dotted = await run("read_file", { path: "./a.txt" });
		await other();
		const absolute = await run("read_file", { offset: 1, path: join(directory, "a.txt") });
		expect(dotted.result.content).toBe(readStub("a.txt", 2, "one\ntwo\n"));
		expect(absolute.result.content).toBe(readStub("a.txt", 2, "one\ntwo\n"));
	});

	it("keys on offset and limit: another window of the same file is read for real", async () => {
		writeFileSync(join(directory, "a.txt"), "one\ntwo\nthree\n");
		const { run } = harness();
		await run("read_file", { path: "a.txt" });
		const fromTwo = await run("read_file", { path: "a.txt", offset: 2 });
		const firstLine = await run("read_file", { path: "a.txt", limit: 1 });
		expect(fromTwo.result.content).toContain("two");
		expect(fromTwo.result.content).not.toContain("one");
		expect(firstLine.result.content).toContain("one");
		expect(firstLine.result.content).not.toContain("two");
		const again = await run("read_file", { path: "a.txt", offset: 2 });
		expect(again.result.content).toBe(readStub("a.txt", 3, "one\ntwo\nthree\n"));
	});

	it("reads again after write_file to the path, even when the bytes written are the same", async () => {
		writeFileSync(join(directory, "a.txt"), "same\n");
		const { run } = harness();
		await run("read_file", { path: "a.txt" });
		await run("read_file", { path: "a.txt", offset: 1, limit: 1 });
		const write = await run("write_file", { path: "a.txt", content: "same\n" });
		expect(write.result.ok).toBe(true);
		const whole = await run("read_file", { path: "a.txt" });
		const window = await run("read_file", { path: "a.txt", offset: 1, limit: 1 });
		expect(whole.result.content).toContain("same");
		expect(whole.result.content).not.toContain("unchanged since");
		expect(window.result.content).not.toContain("unchanged since");
	});

	it("reads again after edit_file changes the file", async () => {
		writeFileSync(join(directory, "a.txt"), "old line\n");
		const { run } = harness();
		await run("read_file", { path: "a.txt" });
		const edit = await run("edit_file", { path: "a.txt", old_string: "old", new_string: "new" });
		expect(edit.result.ok).toBe(true);
		const after = await run("read_file", { path: "a.txt" });
		expect(after.result.content).toContain("new line");
	});

	it("reads again when the file changed on disk, then stubs against the new content", async () => {
		const path = join(directory, "a.txt");
		writeFileSync(path, "before\n");
		const { run, other } = harness();
		await run("read_file", { path: "a.txt" });
		writeFileSync(path, "after\nmore\n");
		const changed = await run("read_file", { path: "a.txt" });
		expect(changed.result.content).toContain("after");
		await other();
		const again = await run("read_file", { path: "a.txt" });
		expect(again.result.content).toBe(readStub("a.txt", 2, "after\nmore\n"));
	});

	it("lets a read of a deleted file run (the real not-found error, no stub)", async () => {
		const path = join(directory, "a.txt");
		writeFileSync(path, "here\n");
		const { run } = harness();
		await run("read_file", { path: "a.txt" });
		unlinkSync(path);
		const gone = await run("read_file", { path: "a.txt" });
		expect(gone.result.ok).toBe(false);
		expect(gone.result.errorCode).toBe("not_found");
	});

	it("never stubs a read whose earlier result the model can no longer see", async () => {
		writeFileSync(join(directory, "a.txt"), "body\n");
		const { run, hidden, other } = harness();
		const first = await run("read_file", { path: "a.txt" });
		hidden.add(first.id);
		const second = await run("read_file", { path: "a.txt" });
		expect(second.result.content).toContain("body");
		expect(second.result.content).not.toContain("unchanged since");
		await other();
		const third = await run("read_file", { path: "a.txt" });
		expect(third.result.content).toBe(readStub("a.txt", 1, "body\n"));
	});

	it("forgets reads and scan results of calls handed to forget()", async () => {
		writeFileSync(join(directory, "a.txt"), "body\n");
		const { guard, run, other } = harness();
		const read = await run("read_file", { path: "a.txt" });
		const shell = await run("shell", { command: "cat a.txt" });
		guard.forget([read.id, shell.id]);
		const reread = await run("read_file", { path: "a.txt" });
		await other();
		const rerun = await run("shell", { command: "cat a.txt" });
		expect(reread.result.content).toContain("body");
		expect(reread.result.content).not.toContain("unchanged since");
		expect(rerun.result.content).toBe(shell.result.content);
	});
});

describe("consecutive identical calls", () => {
	it("warns on the 3rd identical call in a row and refuses the 4th without running it", async () => {
		const { run } = harness();
		const tool = counterTool("lookup");
		const results = [];
		for (let index = 0; index < 4; index++) results.push(await run(tool, { q: "x" }));
		expect(results[0]?.result.content).toBe("lookup answer 1");
		expect(results[1]?.result.content).toBe("lookup answer 2");
		expect(results[2]?.result.content).toBe(
			"lookup answer 3\n\nthis is the 3rd identical lookup call in a row; the result has not changed",
		);
		expect(results[3]?.result).toMatchObject({
			ok: false,
			errorCode: "repeat_blocked",
			content:
				"repeat_blocked: STOP calling lookup with the same arguments — this is the 4th identical call in a row and the result has not changed; continue with the task",
		});
		expect(tool.runs()).toBe(3);
	});

	it("compares arguments canonically: key order and spacing do not matter", async () => {
		const { run } = harness();
		const tool = counterTool("lookup");
		await run(tool, '{"a":1,"b":2}');
		await run(tool, '{ "b": 2, "a": 1 }');
		const third = await run(tool, '{"b":2,\n"a":1}');
		expect(third.result.content).toContain("this is the 3rd identical lookup call in a row");
	});

	it("resets the streak when any other call comes in between", async () => {
		const { run, other } = harness();
		const tool = counterTool("lookup");
		await run(tool, { q: "x" });
		await run(tool, { q: "x" });
		await other();
		const third = await run(tool, { q: "x" });
		const fourth = await run(tool, { q: "x" });
		expect(third.result.content).toBe("lookup answer 3");
		expect(fourth.result.content).toBe("lookup answer 4");
		expect(tool.runs()).toBe(4);
	});

	it("stubs, warns, then refuses a shell command repeated back to back", async () => {
		writeFileSync(join(directory, "f.txt"), "x\ny\n");
		const { run } = harness();
		const results = [];
		for (let index = 0; index < 4; index++) results.push(await run("shell", { command: "cat f.txt" }));
		expect(results[0]?.result.content).toContain("x\ny");
		expect(results[1]?.result.content).toBe("same result as your earlier shell call (3 lines)");
		expect(results[2]?.result.content).toBe(
			"same result as your earlier shell call (3 lines)\n\nthis is the 3rd identical shell call in a row; the result has not changed",
		);
		expect(results[3]?.result.errorCode).toBe("repeat_blocked");
		expect(results[3]?.result.content).toContain("4th identical call in a row");
	});
});

describe("identical scan results", () => {
	it("stubs identical shell output, then refuses the 4th call before it runs", async () => {
		writeFileSync(join(directory, "f.txt"), "x\ny\n");
		const { run, other } = harness();
		const command = "cat f.txt; echo ran >> runs.log";
		const first = await run("shell", { command });
		await other();
		const second = await run("shell", { command });
		await other();
		const third = await run("shell", { command });
		await other();
		const fourth = await run("shell", { command });
		expect(first.result.content).toContain("x\ny");
		expect(second.result.content).toBe("same result as your earlier shell call (3 lines)");
		expect(third.result.content).toBe("same result as your earlier shell call (3 lines)");
		expect(fourth.result).toMatchObject({
			ok: false,
			errorCode: "repeat_blocked",
			content:
				"repeat_blocked: STOP calling shell with these arguments — it has returned the same 3 lines every time; continue with the task",
		});
		expect(readFileSync(join(directory, "runs.log"), "utf8")).toBe("ran\nran\nran\n");
	});

	it("shows a changed output in full and starts counting again from it", async () => {
		const path = join(directory, "f.txt");
		writeFileSync(path, "x\n");
		const { run, other } = harness();
		const command = "cat f.txt";
		await run("shell", { command });
		await other();
		await run("shell", { command });
		await other();
		writeFileSync(path, "changed\n");
		const changed = await run("shell", { command });
		expect(changed.result.content).toContain("changed");
		await other();
		const stubbed = await run("shell", { command });
		await other();
		const stubbedAgain = await run("shell", { command });
		expect(stubbed.result.content).toBe("same result as your earlier shell call (2 lines)");
		expect(stubbedAgain.result.ok).toBe(true);
		// The fifth run of the same command in the window also earns the loop note.
		expect(stubbedAgain.result.content).toMatch(
			/^same result as your earlier shell call \(2 lines\)\n\nloop suspected: /,
		);
	});

	it("compares grep results across other calls", async () => {
		writeFileSync(join(directory, "f.txt"), "needle one\nneedle two\nhay\n");
		const { run, other } = harness();
		const first = await run("grep", { pattern: "needle" });
		await other();
		const second = await run("grep", { pattern: "needle" });
		expect(first.result.content).toContain("needle two");
		expect(second.result.content).toMatch(/^same result as your earlier grep call \(\d+ lines\)$/);
	});

	it("compares an MCP tool by its output", async () => {
		const { run, other } = harness();
		const tool = constantTool("mcp__docs__search", "mcp:docs", "network");
		await run(tool, { q: "x" });
		await other();
		const second = await run(tool, { q: "x" });
		await other();
		await run(tool, { q: "x" });
		await other();
		const fourth = await run(tool, { q: "x" });
		expect(second.result.content).toBe("same result as your earlier mcp__docs__search call (2 lines)");
		expect(fourth.result.content).toMatch(/^repeat_blocked: STOP calling mcp__docs__search with these arguments/);
		expect(tool.runs()).toBe(3);
	});

	it("never compares write tools: an MCP write tool and write_file always answer in full", async () => {
		const { run, other } = harness();
		const tool = constantTool("mcp__db__insert", "mcp:db", "write");
		const inserts = [];
		const writes = [];
		for (let index = 0; index < 3; index++) {
			inserts.push(await run(tool, { q: "x" }));
			await other();
			writes.push(await run("write_file", { path: "out.txt", content: "same\n" }));
			await other();
		}
		for (const insert of inserts) expect(insert.result.content).toBe("first hit\nsecond hit");
		for (const write of writes) expect(write.result.content).toBe("wrote 5 bytes (1 line) to out.txt");
		expect(tool.runs()).toBe(3);
	});

	it("does not compare tools that are neither scanning nor MCP", async () => {
		const { run, other } = harness();
		const tool = constantTool("lookup", "builtin", "read");
		await run(tool, { q: "x" });
		await other();
		const second = await run(tool, { q: "x" });
		expect(second.result.content).toBe("first hit\nsecond hit");
	});
});

describe("loop suspicion", () => {
	it("warns when one call fills 5 of the last 20 slots, once per turn; a new turn starts the count again", async () => {
		const { guard, run, other } = harness();
		const tool = counterTool("web_search");
		const verdicts = [];
		for (let index = 0; index < 6; index++) {
			verdicts.push(await run(tool, { q: "same" }));
			await other();
		}
		expect(verdicts.slice(0, 4).every((verdict) => verdict.loopSuspected === undefined)).toBe(true);
		expect(verdicts[3]?.result.content).toBe("web_search answer 4");
		expect(verdicts[4]?.loopSuspected).toEqual({ tool: "web_search", count: 5 });
		expect(verdicts[4]?.result.content).toBe(
			"web_search answer 5\n\nloop suspected: web_search with the same arguments has run 5 times this turn; change approach or finish with what you have",
		);
		expect(verdicts[5]?.loopSuspected).toBeUndefined();
		expect(verdicts[5]?.result.content).toBe("web_search answer 6");

		guard.startTurn();
		const nextTurn = [];
		for (let index = 0; index < 5; index++) {
			nextTurn.push(await run(tool, { q: "same" }));
			await other();
		}
		expect(nextTurn.slice(0, 4).every((verdict) => verdict.loopSuspected === undefined)).toBe(true);
		expect(nextTurn[4]?.loopSuspected).toEqual({ tool: "web_search", count: 5 });
	});

	it("forgets calls that slid out of the 20-call window", async () => {
		const { run, other } = harness();
		const tool = counterTool("web_search");
		for (let index = 0; index < 4; index++) await run(tool, { q: "same" });
		for (let index = 0; index < 20; index++) await other();
		const fifth = await run(tool, { q: "same" });
		expect(fifth.loopSuspected).toBeUndefined();
	});

	it("detects a cycle A,B,A,B,A,B and names it", async () => {
		const { run } = harness();
		const a = counterTool("alpha");
		const b = counterTool("beta");
		const verdicts = [];
		for (let index = 0; index < 3; index++) {
			verdicts.push(await run(a, { q: "1" }));
			verdicts.push(await run(b, { q: "2" }));
		}
		expect(verdicts.slice(0, 5).every((verdict) => verdict.loopSuspected === undefined)).toBe(true);
		expect(verdicts[5]?.loopSuspected).toEqual({ tool: "alpha→beta", count: 3 });
		expect(verdicts[5]?.result.content).toBe(
			"beta answer 3\n\nloop suspected: the calls alpha → beta have repeated 3 times in a row; change approach or finish with what you have",
		);
	});

	it("detects a cycle of period 3", async () => {
		const { run } = harness();
		const tools = [counterTool("alpha"), counterTool("beta"), counterTool("gamma")];
		let last: GuardVerdict | undefined;
		for (let index = 0; index < 9; index++) last = await run(tools[index % 3] as Tool, { q: "1" });
		expect(last?.loopSuspected).toEqual({ tool: "alpha→beta→gamma", count: 3 });
	});

	it("does not call A,B,C,A,B,D,… a cycle", async () => {
		const { run } = harness();
		const a = counterTool("alpha");
		const b = counterTool("beta");
		const sequence: Array<[Tool, string]> = [
			[a, "1"],
			[b, "2"],
			[counterTool("gamma"), "3"],
			[a, "1"],
			[b, "2"],
			[counterTool("delta"), "4"],
		];
		const verdicts = [];
		for (let round = 0; round < 2; round++) {
			for (const [tool, q] of sequence) verdicts.push(await run(tool, { q }));
		}
		expect(verdicts.every((verdict) => verdict.loopSuspected === undefined)).toBe(true);
		expect(verdicts.every((verdict) => !verdict.result.content.includes("loop suspected"))).toBe(true);
	});

	it("same tool with different arguments is not a loop", async () => {
		const { run } = harness();
		const tool = counterTool("web_search");
		const verdicts = [];
		for (let index = 0; index < 8; index++) verdicts.push(await run(tool, { q: `query ${index}` }));
		expect(verdicts.every((verdict) => verdict.loopSuspected === undefined)).toBe(true);
	});
});

describe("switched off and failing safe", () => {
	it("a disabled guard changes nothing: results are byte-identical to running the tools directly", async () => {
		writeFileSync(join(directory, "a.txt"), "one\ntwo\n");
		const { run, context } = harness({ enabled: false });
		const sequence: Array<[string, unknown]> = [];
		for (let index = 0; index < 5; index++) {
			sequence.push(["read_file", { path: "a.txt" }]);
			sequence.push(["shell", { command: "cat a.txt" }]);
		}
		for (let index = 0; index < 5; index++) sequence.push(["read_file", { path: "a.txt" }]);
		for (const [name, args] of sequence) {
			const guarded = await run(name, args);
			const direct = await (BUILTIN.get(name) as Tool).execute(JSON.stringify(args), context("direct"));
			expect(guarded.loopSuspected).toBeUndefined();
			expect(JSON.stringify(guarded.result)).toBe(JSON.stringify(direct));
		}
	});

	it("a disabled guard hands back the very result object and never answers in advance", () => {
		const guard = new RepeatGuard({ enabled: false, cwd: directory });
		const call: GuardedCall = { id: "1", name: "shell", arguments: '{"command":"true"}', source: "builtin" };
		const result: ToolResult = { ok: true, content: "out" };
		for (let index = 0; index < 6; index++) {
			expect(guard.before(call, () => true)).toBeUndefined();
			expect(guard.after(call, result, false).result).toBe(result);
		}
	});

	it("lets the call through when its internals throw", async () => {
		writeFileSync(join(directory, "a.txt"), "body\n");
		const { run } = harness();
		await run("read_file", { path: "a.txt" });
		const throwing = await run("read_file", { path: "a.txt" }, () => {
			throw new Error("visibility lookup failed");
		});
		expect(throwing.result.ok).toBe(true);
		expect(throwing.result.content).toContain("body");
		expect(throwing.result.content).not.toContain("unchanged since");
	});

	it("hands back the tool's result when recording it throws", () => {
		const guard = new RepeatGuard({ enabled: true, cwd: directory });
		const call: GuardedCall = { id: "1", name: "read_file", arguments: '{"path":"a.txt"}', source: "builtin" };
		const result: ToolResult = {
			ok: true,
			content: "body",
			get details(): Record<string, unknown> {
				throw new Error("broken details");
			},
		};
		expect(guard.before(call, () => true)).toBeUndefined();
		expect(guard.after(call, result, false).result).toBe(result);
	});

	it("guardedExecute turns a tool that throws into a failed result", async () => {
		const { run } = harness();
		const broken: Tool = {
			...counterTool("broken"),
			execute: () => Promise.reject(new Error("boom")),
		};
		const verdict = await run(broken, { q: "x" });
		expect(verdict.result).toMatchObject({ ok: false, errorCode: "tool_failed" });
		expect(verdict.result.content).toContain("boom");
	});
});

describe("memory bound", () => {
	it("remembers at most 2,048 reads, evicting the oldest", () => {
		const path = join(directory, "a.txt");
		writeFileSync(path, "body\n");
		const guard = new RepeatGuard({ enabled: true, cwd: directory });
		const details = { path, lines: 1, sha256: sha("body\n") };
		const read = (id: string, offset: number): GuardedCall => ({
			id,
			name: "read_file",
			arguments: JSON.stringify({ path: "a.txt", offset }),
			source: "builtin",
		});
		for (let offset = 1; offset <= 2049; offset++) {
			const call = read(`r${offset}`, offset);
			guard.before(call, () => true);
			guard.after(call, { ok: true, content: "body", details }, false);
		}
		expect(guard.before(read("again-oldest", 1), () => true)).toBeUndefined();
		expect(guard.before(read("again-newest", 2049), () => true)?.content).toContain("unchanged since");
	});
});
