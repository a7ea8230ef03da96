import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../src/session/store.js";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "../support/fake-provider.js";

interface WireMessage {
	role: string;
	content: unknown;
	tool_call_id?: string;
}
const call = (name: string, args: unknown, id?: string) => ({ id, name, arguments: JSON.stringify(args) });
const toolTexts = (request: RecordedRequest | undefined) =>
	((request?.body.messages ?? []) as WireMessage[])
		.filter((message) => message.role === "tool")
		.map((message) => String(message.content));

describe.skipIf(!cliBuilt)("permission modes in headless runs", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	it("refuses a shell call without --mode auto, telling the model how to allow it, and records the refusal", async () => {
		const work = tempDir();
		const home = tempDir("snowpea-home-");
		fake = await startFakeProvider({
			script: [{ toolCalls: [call("shell", { command: "touch ran.txt" })] }, { text: "could not run it" }],
		});
		const result = await runCli(["run", "--json", "touch a file"], { env: cliEnv(home, fake), cwd: work });
		expect(result.code).toBe(0);
		expect(existsSync(join(work, "ran.txt"))).toBe(false);
		const [answer] = toolTexts(fake.requests[1]);
		expect(answer).toMatch(/^permission denied: shell .*needs approval in accept mode/);
		expect(answer).toContain("--mode auto");
		const events = result.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as { type: string; errorCode?: string; sessionId?: string });
		expect(events.find((event) => event.type === "tool.result")?.errorCode).toBe("permission_denied");
		const store = SessionStore.open(join(home, "state.db"));
		try {
			const decisions = store.decisions(events[0]?.sessionId as string);
			expect(decisions.filter((decision) => decision.kind === "approval").map((decision) => decision.body)).toEqual([
				{ tool: "shell", arguments: "touch ran.txt", verdict: "deny", scope: "mode", mode: "accept" },
			]);
		} finally {
			store.close();
		}

		// the same call runs with --mode auto
		fake.push({ toolCalls: [call("shell", { command: "touch ran.txt" })] }, { text: "ran it" });
		const auto = await runCli(["run", "--mode", "auto", "touch a file"], { env: cliEnv(home, fake), cwd: work });
		expect(auto.code).toBe(0);
		expect(existsSync(join(work, "ran.txt"))).toBe(true);
	});

	it("--mode plan refuses a write to a .ts file but writes notes.md", async () => {
		const work = tempDir();
		fake = await startFakeProvider({
			script: [
				{
					toolCalls: [
						call("write_file", { path: "main.ts", content: "export {};\n" }),
						call("write_file", { path: "notes.md", content: "# Plan\n" }),
					],
				},
				{ text: "planned" },
			],
		});
		const result = await runCli(["run", "--mode", "plan", "make a plan"], { env: cliEnv(tempDir(), fake), cwd: work });
		expect(result.code).toBe(0);
		expect(existsSync(join(work, "main.ts"))).toBe(false);
		expect(readFileSync(join(work, "notes.md"), "utf8")).toBe("# Plan\n");
		const [refused, written] = toolTexts(fake.requests[1]);
		expect(refused).toMatch(/^permission denied: write_file to main\.ts is not allowed in plan mode/);
		expect(written).toContain("notes.md");
		expect(result.stderr).toMatch(/✗ write_file: permission denied/);
	});

	it("rejects an unknown mode as a usage error", async () => {
		const result = await runCli(["run", "--mode", "yolo", "x"], { env: cliEnv(tempDir()), cwd: tempDir() });
		expect(result.code).toBe(2);
		expect(result.stderr).toMatch(/--mode must be plan, accept, auto/);
	});
});
