// The interactive session, driven like a person would: in a detached tmux pane, keys sent with send-keys, the
// screen read with capture-pane. Each test runs its own tmux server on a private socket.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../src/session/store.js";
import { CLI, cliBuilt, cliEnv, tempDir } from "../support/cli.js";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "../support/fake-provider.js";

const tmuxInstalled = spawnSync("tmux", ["-V"]).status === 0;
if (!tmuxInstalled) console.warn("test/e2e/chat.test.ts: skipped — tmux is not installed (apt-get install tmux)");

interface WireMessage {
	role: string;
	content: unknown;
}
const call = (name: string, args: unknown, id?: string) => ({ id, name, arguments: JSON.stringify(args) });
const toolTexts = (request: RecordedRequest | undefined) =>
	((request?.body.messages ?? []) as WireMessage[])
		.filter((message) => message.role === "tool")
		.map((message) => String(message.content));
const userTexts = (request: RecordedRequest | undefined) =>
	((request?.body.messages ?? []) as WireMessage[])
		.filter((message) => message.role === "user")
		.map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));

/** One snowpea process in a tmux pane of its own server. */
class Pane {
	private constructor(
		private readonly socket: string,
		readonly name: string,
	) {}

	/** Starts `node dist/cli/main.js ...args` in a 140×50 pane; the pane stays after the process ends. */
	static start(args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Pane {
		const directory = tempDir("snowpea-tmux-");
		const config = join(directory, "tmux.conf");
		writeFileSync(config, "set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n");
		const pane = new Pane(join(directory, "socket"), "chat");
		const command = `${[process.execPath, CLI, ...args].map(quote).join(" ")}; echo "[snowpea exited $?]"`;
		pane.tmux(
			["-f", config, "new-session", "-d", "-s", pane.name, "-x", "140", "-y", "50", "-c", options.cwd, command],
			options.env,
		);
		return pane;
	}

	tmux(args: string[], env: NodeJS.ProcessEnv = process.env): string {
		const result = spawnSync("tmux", ["-S", this.socket, ...args], { env, encoding: "utf8" });
		if (result.status !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${result.stderr}`);
		return result.stdout;
	}

	/** Types `text` literally, then presses Enter. */
	type(text: string): void {
		this.tmux(["send-keys", "-t", this.name, "-l", text]);
		this.keys("Enter");
	}

	/** Presses keys by tmux name: "Enter", "C-c", "C-d", "M-Enter". */
	keys(...names: string[]): void {
		this.tmux(["send-keys", "-t", this.name, ...names]);
	}

	/** The whole screen and scrollback, wrapped lines joined. */
	screen(): string {
		return this.tmux(["capture-pane", "-p", "-J", "-t", this.name, "-S", "-10000"]);
	}

	/** Polls the screen until `pattern` shows (or `count` times), failing with the screen after `timeoutMs`. */
	async waitFor(pattern: RegExp | string, options: { count?: number; timeoutMs?: number } = {}): Promise<string> {
		const count = options.count ?? 1;
		const timeoutMs = options.timeoutMs ?? 15_000;
		const started = Date.now();
		for (;;) {
			const screen = this.screen();
			if (occurrences(screen, pattern) >= count) return screen;
			if (Date.now() - started > timeoutMs) {
				throw new Error(`timed out waiting for ${String(pattern)} ×${count}; the screen:\n${screen}`);
			}
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
	}

	/**
	 * Waits for snowpea to end and returns its exit status. The pane's shell prints it: tmux itself is not relied
	 * on, as it may leave a process that switched the terminal to raw mode unreaped for a long time.
	 */
	async waitForExit(timeoutMs = 15_000): Promise<number> {
		const screen = await this.waitFor(/\[snowpea exited \d+\]/, { timeoutMs });
		return Number(/\[snowpea exited (\d+)\]/.exec(screen)?.[1]);
	}

	close(): void {
		spawnSync("tmux", ["-S", this.socket, "kill-server"]);
	}
}

function occurrences(text: string, pattern: RegExp | string): number {
	if (typeof pattern === "string") return text.split(pattern).length - 1;
	return (
		text.match(new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`)) ?? []
	).length;
}

function quote(word: string): string {
	return /^[\w./:=@-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

describe.skipIf(!cliBuilt || !tmuxInstalled)("snowpea interactive, end to end in tmux", () => {
	let fake: FakeProvider;
	const panes: Pane[] = [];
	const start = (args: string[], home: string, cwd: string) => {
		const pane = Pane.start(args, { env: { ...cliEnv(home, fake), NO_COLOR: "1" }, cwd });
		panes.push(pane);
		return pane;
	};
	afterEach(async () => {
		for (const pane of panes.splice(0)) pane.close();
		await fake?.close();
	});

	it("streams an answer under a status line, then /cost, /context, an unknown command and /quit", async () => {
		fake = await startFakeProvider({ script: [{ text: "Hello from the fake model.\nA second line." }] });
		const home = tempDir("snowpea-home-");
		const pane = start(["--model", "openai:gpt-4o"], home, tempDir());
		await pane.waitFor(/openai:gpt-4o · context –\/128k · cache – · \$0\.0000 · mode accept/);
		pane.type("say hello");
		await pane.waitFor("A second line.");
		// after the turn, the status line has the context used and the cost
		await pane.waitFor(/openai:gpt-4o · context [\d.]+k?\/128k \([\d.]+%\) · cache 0% · \$0\.\d{4} · mode accept/);

		pane.type("/cost");
		const cost = await pane.waitFor(/^total\s+[\d,]+\s+0\s+0\s+\d+\s+\$0\.\d{4}$/m);
		expect(cost).toMatch(/^round\s+input\s+cached\s+written\s+output\s+cost$/m);
		expect(cost).toMatch(/^1\s+[\d,]+\s+0\s+0\s+\d+\s+\$0\.\d{4}$/m);

		pane.type("/context");
		const context = await pane.waitFor(/^total\s+[\d,]+\s+[\d.]+%\s+of a 128k window$/m);
		for (const part of ["system: stable", "context files", "tools", "history", "tool results: live", "placeholders"]) {
			expect(context).toContain(part);
		}
		expect(context).toMatch(/^history\s+[\d,]+\s+[\d.]+%\s+2 messages$/m);

		pane.type("/contxt");
		await pane.waitFor("unknown command /contxt — did you mean /context?");

		pane.type("/quit");
		expect(await pane.waitForExit()).toBe(0);
		const screen = pane.screen();
		const id = /resume with: snowpea --resume (\S+)/.exec(screen)?.[1] as string;
		expect(id).toMatch(/^[0-9a-f-]{36}$/);
		expect(userTexts(fake.requests[0])).toEqual(["say hello"]);
		// the history file keeps the prompts for the next session
		expect(readFileSync(join(home, "history"), "utf8")).toContain("say hello\n");
	});

	it("/compact folds the conversation into the model's summary, and the next request carries it", async () => {
		const summary =
			"## Task\nGreet twice.\n## Decisions\nNone.\n## Files touched\nNone.\n## Current state\nGreeted.\n## Next steps\nNone.";
		fake = await startFakeProvider({
			script: [{ text: "First answer." }, { text: "Second answer." }, { text: summary }, { text: "Third answer." }],
		});
		const pane = start([], tempDir("snowpea-home-"), tempDir());
		await pane.waitFor("mode accept");
		pane.type("first prompt");
		await pane.waitFor("First answer.");
		pane.type("second prompt");
		await pane.waitFor("Second answer.");
		pane.type("/compact");
		await pane.waitFor(/context: compacted [\d,]+ → [\d,]+ tokens \(summary, manual\)/);
		pane.type("third prompt");
		await pane.waitFor("Third answer.");
		const last = JSON.stringify(fake.requests[3]?.body.messages);
		expect(last).toContain("Greeted.");
		expect(last).not.toContain("First answer.");
		pane.type("/cost");
		// the summary request is priced with the turns
		await pane.waitFor(/^total(\s+[\d,]+){4}\s+\$0\.\d{4}$/m);
		expect(pane.screen()).toContain("4 requests");
	});

	it("/new, /sessions, /resume and /model move between sessions and models; /tools lists the tool groups", async () => {
		fake = await startFakeProvider({
			script: [{ text: "Answer one." }, { text: "Answer two." }, { text: "Answer three." }],
		});
		const home = tempDir("snowpea-home-");
		const pane = start([], home, tempDir());
		await pane.waitFor("mode accept");
		pane.type("alpha prompt");
		await pane.waitFor("Answer one.");
		pane.type("/new");
		await pane.waitFor("new session · openai:gpt-4o", { count: 2 });
		pane.type("beta prompt");
		await pane.waitFor("Answer two.");
		pane.type("/sessions");
		const listed = await pane.waitFor("/resume <id> continues one");
		const first = /^ {2}([0-9a-f]{8}) .*alpha prompt$/m.exec(listed)?.[1] as string;
		expect(listed).toMatch(/^\* [0-9a-f]{8} .*beta prompt$/m);
		pane.type(`/resume ${first}`);
		await pane.waitFor(new RegExp(`resumed session ${first}[0-9a-f-]+ "alpha prompt" · 2 messages`));
		pane.type("/model anthropic:claude-sonnet-4-5");
		await pane.waitFor("model anthropic:claude-sonnet-4-5 (window 200k tokens, vision yes)");
		pane.type("/model gpt-4o");
		await pane.waitFor(/\/model: .*provider:model/);
		pane.type("gamma prompt");
		await pane.waitFor("Answer three.");
		const last = fake.requests.at(-1) as RecordedRequest;
		expect(last.api).toBe("anthropic");
		expect(JSON.stringify(last.body.messages)).toContain("alpha prompt");
		expect(JSON.stringify(last.body.messages)).not.toContain("beta prompt");
		pane.type("/tools");
		const tools = await pane.waitFor(/^deferred, loaded on demand by tool_search/m);
		expect(tools).toMatch(/^eager \(\d+\): read_file \[read\].*shell \[exec\]/m);
		expect(tools).toMatch(/browser \(\d+\)/);
	});

	it("asks before a shell call: y runs it, n refuses it, both are recorded; /expand shows a result in full", async () => {
		const work = tempDir();
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("shell", { command: "touch approved.txt && seq 1 5" })] },
				{ toolCalls: [call("shell", { command: "touch denied.txt" })] },
				{ text: "All done here." },
			],
		});
		const home = tempDir("snowpea-home-");
		const pane = start([], home, work);
		await pane.waitFor("mode accept");
		pane.type("make two files");
		await pane.waitFor("shell wants to run: touch approved.txt && seq 1 5");
		await pane.waitFor("allow? [y]es / [n]o / [a]lways for this session:");
		pane.type("y");
		await pane.waitFor(/\[1\] ✓ shell: exit 0 · 5 lines \(\d+ lines · \/expand 1\)/);
		await pane.waitFor("shell wants to run: touch denied.txt");
		pane.type("n");
		await pane.waitFor("All done here.");
		expect(existsSync(join(work, "approved.txt"))).toBe(true);
		expect(existsSync(join(work, "denied.txt"))).toBe(false);
		expect(pane.screen()).toMatch(/\[2\] ✗ shell: permission denied: the user did not approve shell/);
		expect(toolTexts(fake.requests[2])[1]).toMatch(/^permission denied: the user did not approve shell/);

		pane.type("/expand 1");
		await pane.waitFor(/^1\n2\n3\n4\n5\n/m);

		pane.keys("C-d");
		expect(await pane.waitForExit()).toBe(0);
		const id = /resume with: snowpea --resume (\S+)/.exec(pane.screen())?.[1] as string;
		const store = SessionStore.open(join(home, "state.db"));
		try {
			const approvals = store.decisions(id).filter((decision) => decision.kind === "approval");
			expect(approvals.map((decision) => [decision.round, decision.body])).toEqual([
				[
					1,
					{
						tool: "shell",
						arguments: "touch approved.txt && seq 1 5",
						verdict: "allow",
						scope: "once",
						mode: "accept",
					},
				],
				[2, { tool: "shell", arguments: "touch denied.txt", verdict: "deny", scope: "once", mode: "accept" }],
			]);
		} finally {
			store.close();
		}
	});

	it("/mode plan refuses a write to a .ts file and allows notes.md", async () => {
		const work = tempDir();
		fake = await startFakeProvider({
			script: [
				{
					toolCalls: [
						call("write_file", { path: "main.ts", content: "export {};\n" }),
						call("write_file", { path: "notes.md", content: "# Plan\n" }),
					],
				},
				{ text: "Plan written." },
			],
		});
		const pane = start([], tempDir("snowpea-home-"), work);
		await pane.waitFor("mode accept");
		pane.type("/mode plan");
		await pane.waitFor("mode plan: read and network tools only");
		pane.type("plan the work");
		await pane.waitFor("Plan written.");
		expect(pane.screen()).toMatch(
			/\[1\] ✗ write_file: permission denied: write_file to main\.ts is not allowed in plan mode/,
		);
		expect(pane.screen()).toMatch(/\[2\] ✓ write_file/);
		expect(existsSync(join(work, "main.ts"))).toBe(false);
		expect(readFileSync(join(work, "notes.md"), "utf8")).toBe("# Plan\n");
		expect(toolTexts(fake.requests[1])[0]).toContain("/mode accept");
		// at an idle prompt, Ctrl-C clears what is typed, then says how to leave, then leaves
		pane.tmux(["send-keys", "-t", pane.name, "-l", "half typed"]);
		pane.keys("C-c");
		pane.keys("C-c");
		await pane.waitFor("(press Ctrl-C again or Ctrl-D to leave)");
		pane.keys("C-c");
		expect(await pane.waitForExit()).toBe(0);
		expect(fake.requests).toHaveLength(2);
	});

	it("Ctrl-C stops a turn mid-request; snowpea --resume continues the same session", async () => {
		const work = tempDir();
		const home = tempDir("snowpea-home-");
		fake = await startFakeProvider({
			script: [{ delayMs: 60_000, then: { text: "too late" } }, { text: "Continuing where we left off." }],
		});
		const first = start([], home, work);
		await first.waitFor("mode accept");
		first.type("remember the word pumpkin");
		await waitUntil(() => fake.requests.length === 1);
		first.keys("C-c");
		await first.waitFor("stopped: interrupted");
		// the second Ctrl-C leaves
		first.keys("C-c");
		expect(await first.waitForExit()).toBe(0);
		const id = /resume with: snowpea --resume (\S+)/.exec(first.screen())?.[1] as string;
		expect(first.screen()).not.toContain("too late");

		const second = start(["--resume"], home, work);
		await second.waitFor(`resumed session ${id}`);
		second.type("what was the word?");
		await second.waitFor("Continuing where we left off.");
		expect(userTexts(fake.requests[1])).toEqual(["remember the word pumpkin", "what was the word?"]);
		second.type("/quit");
		expect(await second.waitForExit()).toBe(0);
		expect(second.screen()).toContain(`resume with: snowpea --resume ${id}`);
	});

	it("inlines @path text with line numbers, refuses secrets, and continues a line ending in a backslash", async () => {
		const work = tempDir();
		writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");
		writeFileSync(join(work, ".env"), "TOKEN=secret\n");
		fake = await startFakeProvider({ script: [{ text: "Read it." }] });
		const pane = start([], tempDir("snowpea-home-"), work);
		await pane.waitFor("mode accept");
		pane.type("look at @a.txt \\");
		await pane.waitFor("… ");
		pane.type("and @.env");
		await pane.waitFor("Read it.");
		expect(pane.screen()).toContain("refused @.env: it may hold secrets");
		const [prompt] = userTexts(fake.requests[0]);
		expect(prompt).toContain("look at @a.txt \\nand @.env");
		expect(prompt).toContain("Contents of a.txt:\\n     1\\talpha\\n     2\\tbeta");
		expect(prompt).not.toContain("secret");
	});
});

async function waitUntil(check: () => boolean, timeoutMs = 15_000): Promise<void> {
	const started = Date.now();
	while (!check()) {
		if (Date.now() - started > timeoutMs) throw new Error("timed out");
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
}
