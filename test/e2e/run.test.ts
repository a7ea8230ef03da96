import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, spawnCli, tempDir, waitFor } from "../support/cli.js";
import { type FakeProvider, type ScriptStep, startFakeProvider } from "../support/fake-provider.js";

interface WireMessage {
	role: string;
	content: unknown;
	tool_call_id?: string;
	tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

const messagesOf = (fake: FakeProvider, index: number) => (fake.requests[index]?.body.messages ?? []) as WireMessage[];
const toolMessages = (fake: FakeProvider, index: number) =>
	messagesOf(fake, index).filter((message) => message.role === "tool");
const call = (name: string, args: unknown, id?: string) => ({ id, name, arguments: JSON.stringify(args) });

describe.skipIf(!cliBuilt)("snowpea run, end to end against the fake provider", () => {
	let fake: FakeProvider;
	let home: string;
	let work: string;
	const run = (args: string[], extra: Record<string, string> = {}) =>
		runCli(args, { env: cliEnv(home, fake, extra), cwd: work });

	beforeEach(async () => {
		home = tempDir("snowpea-home-");
		work = tempDir("snowpea-work-");
	});
	afterEach(async () => {
		await fake?.close();
	});

	it("does a multi-round task that writes, reads, edits, greps and runs a file", async () => {
		fake = await startFakeProvider({
			script: [
				{
					text: "I'll write it.",
					toolCalls: [call("write_file", { path: "hello.py", content: 'print("hello world")\n' })],
				},
				{ toolCalls: [call("read_file", { path: "hello.py" })] },
				{
					toolCalls: [call("edit_file", { path: "hello.py", old_string: "hello world", new_string: "goodbye world" })],
				},
				{ toolCalls: [call("grep", { pattern: "goodbye" })] },
				{ toolCalls: [call("shell", { command: "python3 hello.py" })] },
				{ text: "All done: hello.py prints goodbye world." },
			],
		});
		const result = await run(["run", "--mode", "auto", "--model", "openai:gpt-4o", "write hello.py and run it"]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("All done: hello.py prints goodbye world.");
		expect(result.stderr).toMatch(/→ write_file/);
		expect(result.stderr).toMatch(/✓ shell/);
		expect(readFileSync(join(work, "hello.py"), "utf8")).toBe('print("goodbye world")\n');
		expect(fake.requests).toHaveLength(6);
		expect(String(toolMessages(fake, 2)[1]?.content)).toContain('1\tprint("hello world")');
		expect(String(toolMessages(fake, 4)[3]?.content)).toContain('hello.py:1:print("goodbye world")');
		expect(String(toolMessages(fake, 5)[4]?.content)).toMatch(/goodbye world\n[\s\S]*\[exit 0\]/);
		// the session id is prompt_cache_key, and the same on every round
		const keys = new Set(fake.requests.map((request) => request.body.prompt_cache_key));
		expect(keys.size).toBe(1);
		expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
	});

	it("runs parallel read-only calls and pairs each result with its call", async () => {
		writeFileSync(join(work, "a.txt"), "alpha\n");
		writeFileSync(join(work, "b.txt"), "beta\n");
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("read_file", { path: "a.txt" }, "first"), call("read_file", { path: "b.txt" }, "second")] },
				{ text: "read both" },
			],
		});
		const result = await run(["run", "read a and b"]);
		expect(result.code).toBe(0);
		const results = toolMessages(fake, 1);
		expect(results.map((message) => message.tool_call_id)).toEqual(["first", "second"]);
		expect(String(results[0]?.content)).toContain("alpha");
		expect(String(results[1]?.content)).toContain("beta");
	});

	it("resumes a session and exports it as jsonl and markdown", async () => {
		fake = await startFakeProvider({ script: [{ text: "first answer" }, { text: "second answer" }] });
		const first = await run(["run", "--json", "remember the word pumpkin"]);
		expect(first.code).toBe(0);
		const events = first.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as { type: string; sessionId?: string });
		expect(events[0]?.type).toBe("session.started");
		expect(events.at(-1)?.type).toBe("turn.done");
		const id = events[0]?.sessionId as string;

		const second = await run(["run", "--session", id.slice(0, 8), "what was the word?"]);
		expect(second.code).toBe(0);
		expect(messagesOf(fake, 1).map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);

		const jsonl = await run(["sessions", "export", id]);
		const lines = jsonl.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as { role: string; content: string });
		expect(lines.map((line) => line.role)).toEqual(["user", "assistant", "user", "assistant"]);
		expect(lines[0]?.content).toBe("remember the word pumpkin");
		const markdown = await run(["sessions", "export", id, "--format", "md"]);
		expect(markdown.stdout).toContain("## User\n\nwhat was the word?");
		const list = await run(["sessions", "list", "--json"]);
		expect((JSON.parse(list.stdout) as { id: string }[]).map((session) => session.id)).toEqual([id]);
		const show = await run(["sessions", "show", id]);
		expect(show.stdout).toContain("usage: 2 requests");
		const missing = await run(["sessions", "show", "nosuchsession"]);
		expect(missing.code).toBe(2);
		expect(missing.stderr.trim().split("\n")).toHaveLength(1);
	});

	it("loses nothing when killed mid-turn and repairs the dangling call on resume", async () => {
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("write_file", { path: "kept.txt", content: "kept" })] },
				{ toolCalls: [call("shell", { command: "touch started && sleep 30" }, "stuck")] },
				{ text: "recovered" },
			],
		});
		const child = spawnCli(["run", "--mode", "auto", "--json", "start something long"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		await waitFor(() => existsSync(join(work, "started")), 15_000, "the shell call to start");
		child.kill("SIGKILL");
		const killed = await child.result;
		expect(killed.signal).toBe("SIGKILL");
		const id = (JSON.parse(killed.stdout.split("\n")[0] as string) as { sessionId: string }).sessionId;

		const resumed = await run(["run", "--session", id, "carry on"]);
		expect(resumed.code).toBe(0);
		const sent = messagesOf(fake, 2);
		expect(sent.map((message) => message.role)).toEqual([
			"system",
			"user",
			"assistant",
			"tool",
			"assistant",
			"tool",
			"user",
		]);
		expect(sent[5]).toMatchObject({
			role: "tool",
			tool_call_id: "stuck",
			content: "(no result was recorded for this call; it did not finish)",
		});
		expect(String(sent[3]?.content)).toContain("wrote 4 bytes");
	});

	it("serves two concurrent runs on one state.db", async () => {
		const respond = (request: { body: Record<string, unknown> }): ScriptStep => {
			const messages = request.body.messages as WireMessage[];
			const tools = messages.filter((message) => message.role === "tool").length;
			return tools < 3 ? { toolCalls: [call("list_dir", { path: "." })] } : { text: "listed three times" };
		};
		fake = await startFakeProvider({ respond });
		const [a, b] = await Promise.all([run(["run", "task a"]), run(["run", "task b"])]);
		expect([a.code, b.code]).toEqual([0, 0]);
		const list = JSON.parse((await run(["sessions", "list", "--json"])).stdout) as { id: string; title: string }[];
		expect(list.map((session) => session.title).sort()).toEqual(["task a", "task b"]);
		for (const session of list) {
			const exported = (await run(["sessions", "export", session.id])).stdout.trim().split("\n");
			expect(exported).toHaveLength(1 + 3 * 2 + 1);
		}
	});

	it("answers malformed arguments and unknown tools with errors the model reads", async () => {
		fake = await startFakeProvider({
			script: [
				{
					toolCalls: [
						{ name: "read_file", arguments: "{not json" },
						call("frobnicate", {}),
						call("read_file", { path: 7 }),
					],
				},
				{ text: "I see my mistakes" },
			],
		});
		const result = await run(["run", "try things"]);
		expect(result.code).toBe(0);
		const [bad, unknown, wrongType] = toolMessages(fake, 1).map((message) => String(message.content));
		expect(bad).toContain("not valid JSON");
		expect(unknown).toContain('unknown tool "frobnicate"');
		expect(wrongType).toMatch(/path/);
	});

	it("explains a rejected key in one line naming the variable, exit 3", async () => {
		fake = await startFakeProvider({ script: [{ status: 401 }] });
		const result = await run(["run", "hi"]);
		expect(result.code).toBe(3);
		expect(result.stderr).toMatch(/error: .*OPENAI_API_KEY/);
	});

	it("retries a 429 with retry-after and then succeeds", async () => {
		fake = await startFakeProvider({ script: [{ status: 429, headers: { "retry-after": "0" } }, { text: "made it" }] });
		const result = await run(["run", "hi"]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("made it");
		expect(result.stderr).toMatch(/retrying/);
		expect(fake.requests).toHaveLength(2);
	});

	it("reports a cut stream as an error, never as an empty answer", async () => {
		fake = await startFakeProvider({ script: [{ cut: true, text: "partial" }] });
		const result = await run(["run", "hi"]);
		expect(result.code).toBe(3);
		expect(result.stderr).toMatch(/error: /);
	});

	it("stops on SIGINT with exit 130 and the session stays resumable", async () => {
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("shell", { command: "touch started && sleep 30" }, "long")] },
				{ text: "resumed fine" },
			],
		});
		const child = spawnCli(["run", "--mode", "auto", "--json", "start something long"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		await waitFor(() => existsSync(join(work, "started")), 15_000, "the shell call to start");
		child.kill("SIGINT");
		const stopped = await child.result;
		expect(stopped.code).toBe(130);
		const id = (JSON.parse(stopped.stdout.split("\n")[0] as string) as { sessionId: string }).sessionId;
		const resumed = await run(["run", "--session", id, "go on"]);
		expect(resumed.code).toBe(0);
		const sent = messagesOf(fake, 1);
		expect(sent.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
		expect(String(sent[3]?.content)).toMatch(/aborted|did not finish/);
	});

	it("stops at --max-rounds with exit 1, and rejects bad usage with exit 2", async () => {
		fake = await startFakeProvider({ respond: () => ({ toolCalls: [call("list_dir", {})] }) });
		const limited = await run(["run", "--max-rounds", "2", "loop forever"]);
		expect(limited.code).toBe(1);
		expect(fake.requests).toHaveLength(2);
		expect((await run(["run", "--max-rounds", "zero", "x"])).code).toBe(2);
		expect((await run(["run", "--model", "gpt-4o", "x"])).stderr).toMatch(/provider:model/);
		expect((await run(["frobnicate"])).code).toBe(2);
	});
});
