import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "../support/fake-provider.js";

const MCP_SERVER = resolve(import.meta.dirname, "../support/mcp-test-server.mjs");
const call = (name: string, args: unknown, id?: string) => ({ id, name, arguments: JSON.stringify(args) });
interface WireMessage {
	role: string;
	content: unknown;
}
const toolNames = (request: RecordedRequest) =>
	((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
const systemText = (request: RecordedRequest) => String(((request.body.messages ?? []) as WireMessage[])[0]?.content);
const lastTool = (request: RecordedRequest) =>
	String(((request.body.messages ?? []) as WireMessage[]).filter((message) => message.role === "tool").at(-1)?.content);

describe.skipIf(!cliBuilt)("the tool surface a session gets, end to end", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	it("defers the browser and MCP groups, loads one tool by tool_search and another by a direct call", async () => {
		const work = tempDir();
		writeFileSync(
			join(work, ".mcp.json"),
			JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [MCP_SERVER] } } }),
		);
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("tool_search", { query: "select:browser_snapshot" })] },
				{ toolCalls: [call("mcp__test__echo", { text: "hello from the model" })] },
				{ text: "done" },
			],
		});
		const result = await runCli(["run", "try the deferred tools"], { env: cliEnv(tempDir(), fake), cwd: work });
		expect(result.code).toBe(0);
		const [first, second, third] = fake.requests as [RecordedRequest, RecordedRequest, RecordedRequest];
		expect(toolNames(first)).not.toContain("browser_snapshot");
		expect(toolNames(first)).not.toContain("mcp__test__echo");
		expect(systemText(first)).toContain("Deferred (load with tool_search): browser (8), mcp:test (5)");
		expect(toolNames(second).slice(-1)).toEqual(["browser_snapshot"]);
		expect(toolNames(second).slice(0, -1)).toEqual(toolNames(first));
		expect(lastTool(third)).toContain("hello from the model");
		expect(lastTool(third)).toContain("loaded mcp__test__echo for this session");
		expect(toolNames(third).slice(-2)).toEqual(["browser_snapshot", "mcp__test__echo"]);
		expect(systemText(third)).toBe(systemText(first));
	});

	it("puts project instructions and the skills index in the system prompt and attaches a nested AGENTS.md once", async () => {
		const work = tempDir();
		mkdirSync(join(work, ".git"));
		writeFileSync(join(work, "AGENTS.md"), "Always run the tests with `make check`.\n");
		mkdirSync(join(work, "pkg"));
		writeFileSync(
			join(work, "pkg", "AGENTS.md"),
			`In pkg/, never edit generated files.\n${"More pkg detail.\n".repeat(40)}`,
		);
		// a tight total budget: the nested file does not fit up front, so it is listed and attached on touch
		mkdirSync(join(work, ".snowpea"));
		writeFileSync(join(work, ".snowpea", "settings.json"), JSON.stringify({ agent: { contextFilesMaxChars: 300 } }));
		writeFileSync(join(work, "pkg", "a.txt"), "a\n");
		writeFileSync(join(work, "pkg", "b.txt"), "b\n");
		mkdirSync(join(work, ".snowpea", "skills", "release"), { recursive: true });
		writeFileSync(
			join(work, ".snowpea", "skills", "release", "SKILL.md"),
			"---\nname: release\ndescription: How to cut a release\n---\nTag, then publish.\n",
		);
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [call("read_file", { path: "pkg/a.txt" })] },
				{ toolCalls: [call("read_file", { path: "pkg/b.txt" })] },
				{ toolCalls: [call("skill_view", { name: "release" })] },
				{ text: "done" },
			],
		});
		const result = await runCli(["run", "look at pkg"], { env: cliEnv(tempDir(), fake), cwd: work });
		expect(result.code).toBe(0);
		const system = systemText(fake.requests[0] as RecordedRequest);
		expect(system).toContain("Always run the tests with `make check`.");
		expect(system).toContain("release: How to cut a release");
		expect(system).not.toContain("never edit generated files");
		expect(system).toContain("pkg/AGENTS.md");
		expect(lastTool(fake.requests[1] as RecordedRequest)).toContain("In pkg/, never edit generated files.");
		expect(lastTool(fake.requests[2] as RecordedRequest)).not.toContain("never edit generated files");
		expect(lastTool(fake.requests[3] as RecordedRequest)).toContain("Tag, then publish.");
	});

	it("sees an instruction file written during the session from the next round on", async () => {
		const work = tempDir();
		fake = await startFakeProvider({
			script: [{ toolCalls: [call("write_file", { path: "AGENTS.md", content: "Prefer tabs.\n" })] }, { text: "done" }],
		});
		expect((await runCli(["run", "set a rule"], { env: cliEnv(tempDir(), fake), cwd: work })).code).toBe(0);
		expect(systemText(fake.requests[0] as RecordedRequest)).not.toContain("Prefer tabs.");
		expect(systemText(fake.requests[1] as RecordedRequest)).toContain("Prefer tabs.");
	});
});
