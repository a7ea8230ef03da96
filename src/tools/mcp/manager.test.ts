import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utf8Bytes } from "../../llm/text.js";
import type { Tool, ToolContext } from "../tool.js";
import { Toolset } from "../toolset.js";
import { MCP_RESULT_CAP_BYTES } from "./call-result.js";
import { loadMcpConfig } from "./config.js";
import { McpManager } from "./manager.js";

const SERVER_SCRIPT = resolve(import.meta.dirname, "../../../test/support/mcp-test-server.mjs");

const roots: string[] = [];
function temporaryDirectory(): string {
	const root = mkdtempSync(join(tmpdir(), "snowpea-mcp-"));
	roots.push(root);
	return root;
}

function contextIn(root: string, signal: AbortSignal = new AbortController().signal): ToolContext {
	return { cwd: root, home: join(root, "home"), sessionId: "s", callId: "c", signal, spillDir: join(root, "spill") };
}

function testServer(env: Record<string, string> = {}) {
	return { command: process.execPath, args: [SERVER_SCRIPT], env };
}

function isRunning(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

describe("McpManager with a real stdio server", () => {
	const root = temporaryDirectory();
	const pidFile = join(root, "server.pid");
	const attachments = join(root, "attachments");
	let vision = true;
	// The server comes from the project's .mcp.json, as most users configure it.
	writeFileSync(
		join(root, ".mcp.json"),
		JSON.stringify({ mcpServers: { test: testServer({ MCP_TEST_PID_FILE: pidFile }) } }),
	);
	const manager = McpManager.fromConfig(loadMcpConfig({ projectDirectory: root }), {
		cwd: root,
		attachmentDirectory: () => attachments,
		vision: () => vision,
	});
	let tools: Tool[] = [];
	const tool = (name: string): Tool => {
		const found = tools.find((candidate) => candidate.name === name);
		if (!found) throw new Error(`no tool ${name}`);
		return found;
	};
	const call = (name: string, args: unknown, context = contextIn(root)) =>
		tool(name).execute(JSON.stringify(args), context);

	beforeAll(async () => {
		tools = await manager.tools();
	});
	afterAll(async () => {
		await manager.close();
	});

	it("lists the server's tools as mcp__<server>__<tool> in the deferred group mcp:<server>", () => {
		expect(tools.map((entry) => entry.name)).toEqual([
			"mcp__test__echo",
			"mcp__test__picture",
			"mcp__test__big",
			"mcp__test__fail",
			"mcp__test__crash",
		]);
		for (const entry of tools) {
			expect(entry.group).toBe("mcp:test");
			expect(entry.source).toBe("mcp:test");
			expect(entry.definition.name).toBe(entry.name);
		}
		expect(manager.warnings).toEqual([]);
	});

	it("sends the server's description and input schema, and marks readOnlyHint tools as read", () => {
		const echo = tool("mcp__test__echo");
		expect(echo.description).toBe("Echoes the text back.");
		expect(echo.permission).toBe("read");
		expect(echo.readOnly).toBe(true);
		expect(echo.definition.parameters).toMatchObject({
			type: "object",
			properties: { text: { type: "string" } },
			required: ["text"],
		});
		expect(echo.definition.parameters).not.toHaveProperty("$schema");
		expect(tool("mcp__test__big").permission).toBe("network");
		expect(tool("mcp__test__big").readOnly).toBe(false);
	});

	it("returns the same tool list when asked again, without starting the server twice", async () => {
		const pid = readFileSync(pidFile, "utf8");
		expect(await manager.tools()).toBe(tools);
		expect(readFileSync(pidFile, "utf8")).toBe(pid);
	});

	it("round-trips a call", async () => {
		const result = await call("mcp__test__echo", { text: "hello there" });
		expect(result).toMatchObject({ ok: true, content: "echo: hello there" });
	});

	it("passes the server's own argument validation error back as a failed result", async () => {
		const result = await call("mcp__test__echo", { text: 42 });
		expect(result.ok).toBe(false);
		expect(result.content).toMatch(/expected string/);
	});

	it("refuses arguments that are not one JSON object before calling the server", async () => {
		const array = await tool("mcp__test__echo").execute("[1, 2]", contextIn(root));
		expect(array).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		expect(array.content).toContain("must be one JSON object");
		const broken = await tool("mcp__test__echo").execute('{"text": ', contextIn(root));
		expect(broken).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		expect(broken.content).toContain("not valid JSON");
	});

	it("stores an image block in the attachment store and attaches it with a one-line summary", async () => {
		const result = await call("mcp__test__picture", {});
		expect(result.ok).toBe(true);
		expect(result.images).toHaveLength(1);
		const image = result.images?.[0];
		expect(image).toMatchObject({ mime: "image/png", width: 4, height: 3 });
		expect(image?.path.startsWith(attachments)).toBe(true);
		expect(existsSync(image?.path ?? "")).toBe(true);
		expect(result.content).toBe("here is the picture\nimage attached: mcp__test__picture-1.png 4×3 image/png (1 KB)");
		expect(result.content).not.toContain("iVBOR");
	});

	it("stores an image in the calling session's attachment directory when its context names one", async () => {
		const child = join(root, "child-attachments");
		const result = await call("mcp__test__picture", {}, { ...contextIn(root), attachmentDir: child });
		expect(result.images?.[0]?.path.startsWith(child)).toBe(true);
		expect(existsSync(result.images?.[0]?.path ?? "")).toBe(true);
	});

	it("stores but does not attach images when the model cannot see them", async () => {
		vision = false;
		try {
			const result = await call("mcp__test__picture", {});
			expect(result.ok).toBe(true);
			expect(result.images).toBeUndefined();
			expect(result.content).toContain("this model cannot see images");
			expect(result.content).toContain(attachments);
		} finally {
			vision = true;
		}
	});

	it("caps a 50 KB result at 8 KB, keeping the head and a longer tail, with the full text spilled", async () => {
		const result = await call("mcp__test__big", {});
		expect(result.ok).toBe(true);
		const lines = result.content.split("\n");
		const marker = lines.find((line) => line.startsWith("[…"));
		expect(marker).toMatch(/lines \(\d+ bytes\) omitted — full output in .*; read_file it to see everything\]$/);
		expect(utf8Bytes(result.content) - utf8Bytes(marker ?? "")).toBeLessThanOrEqual(MCP_RESULT_CAP_BYTES + 1);
		expect(lines[0]).toBe("line 00001 ..........");
		expect(lines.at(-1)).toBe("line 02500 ..........");
		const markerIndex = lines.indexOf(marker ?? "");
		expect(lines.length - markerIndex - 1).toBeGreaterThan(markerIndex);
		expect(result.details).toMatchObject({ truncated: true });
		const spilled = readFileSync(String(result.details?.spillPath), "utf8");
		expect(spilled.split("\n")).toHaveLength(2500);
	});

	it("turns an isError answer into a failed result carrying the server's text", async () => {
		const result = await call("mcp__test__fail", {});
		expect(result).toMatchObject({ ok: false, errorCode: "tool_error", content: "something broke on purpose" });
	});

	it("cancels a call when the abort signal fires, and the server stays usable", async () => {
		const controller = new AbortController();
		const pending = call("mcp__test__echo", { text: "never", hang: true }, contextIn(root, controller.signal));
		controller.abort();
		expect(await pending).toMatchObject({ ok: false, errorCode: "aborted" });
		expect(await call("mcp__test__echo", { text: "still here" })).toMatchObject({
			ok: true,
			content: "echo: still here",
		});
	});

	it("reports a server that dies mid-call clearly, then restarts it on the next call", async () => {
		const before = Number(readFileSync(pidFile, "utf8"));
		const crashed = await call("mcp__test__crash", {});
		expect(crashed).toMatchObject({ ok: false, errorCode: "server_exited" });
		expect(crashed.content).toContain(
			"MCP server test exited (code 3); its tools are unavailable until it restarts — restarting on the next call",
		);
		const after = await call("mcp__test__echo", { text: "back again" });
		expect(after).toMatchObject({ ok: true, content: "echo: back again" });
		expect(Number(readFileSync(pidFile, "utf8"))).not.toBe(before);
	});

	it("shows the server's tools as one deferred group in the Toolset", () => {
		const toolset = new Toolset(tools, { deferred: true, eager: [] });
		expect(toolset.deferredLine()).toBe("Deferred (load with tool_search): mcp:test (5)");
		expect(toolset.definitions()).toEqual([]);
	});
});

describe("McpManager start-up and shutdown", () => {
	it("gives one warning and no tools for a server whose command does not exist", async () => {
		const root = temporaryDirectory();
		const manager = McpManager.fromConfig(
			loadMcpConfig({ settingsServers: { ghost: { command: "snowpea-no-such-mcp-server-command" } } }),
			{ cwd: root, attachmentDirectory: () => join(root, "attachments"), vision: () => true },
		);
		try {
			expect(await manager.tools()).toEqual([]);
			expect(manager.warnings).toHaveLength(1);
			expect(manager.warnings[0]).toContain("MCP server ghost could not be started");
			expect(manager.warnings[0]).toContain('"snowpea-no-such-mcp-server-command" was not found');
		} finally {
			await manager.close();
		}
	});

	it("lists servers from settings and .mcp.json together; a broken one does not hide the others", async () => {
		const root = temporaryDirectory();
		writeFileSync(join(root, ".mcp.json"), JSON.stringify({ mcpServers: { alpha: testServer() } }));
		const config = loadMcpConfig({
			projectDirectory: root,
			settingsServers: { beta: testServer(), ghost: { command: "snowpea-no-such-mcp-server-command" } },
		});
		const manager = McpManager.fromConfig(config, {
			cwd: root,
			attachmentDirectory: () => join(root, "attachments"),
			vision: () => true,
		});
		try {
			const tools = await manager.tools();
			expect(manager.serverNames).toEqual(["alpha", "beta", "ghost"]);
			expect(tools.filter((entry) => entry.group === "mcp:alpha")).toHaveLength(5);
			expect(tools.filter((entry) => entry.group === "mcp:beta")).toHaveLength(5);
			expect(manager.warnings).toHaveLength(1);
			expect(new Toolset(tools, { deferred: true, eager: [] }).deferredLine()).toBe(
				"Deferred (load with tool_search): mcp:alpha (5), mcp:beta (5)",
			);
		} finally {
			await manager.close();
		}
	});

	it("times out a call that the server never answers", async () => {
		const root = temporaryDirectory();
		const manager = McpManager.fromConfig(loadMcpConfig({ settingsServers: { slow: testServer() } }), {
			cwd: root,
			attachmentDirectory: () => join(root, "attachments"),
			vision: () => true,
			callTimeoutMs: 200,
		});
		try {
			const echo = (await manager.tools()).find((entry) => entry.name === "mcp__slow__echo");
			const result = await echo?.execute(JSON.stringify({ text: "x", hang: true }), contextIn(root));
			expect(result).toMatchObject({ ok: false, errorCode: "timeout" });
			expect(result?.content).toContain("MCP server slow did not answer within 0.2 s");
		} finally {
			await manager.close();
		}
	});

	it("ends the server processes on close, and later calls fail instead of starting them again", async () => {
		const root = temporaryDirectory();
		const pidFile = join(root, "server.pid");
		const manager = McpManager.fromConfig(
			loadMcpConfig({ settingsServers: { test: testServer({ MCP_TEST_PID_FILE: pidFile }) } }),
			{ cwd: root, attachmentDirectory: () => join(root, "attachments"), vision: () => true },
		);
		const tools = await manager.tools();
		const pid = Number(readFileSync(pidFile, "utf8"));
		expect(isRunning(pid)).toBe(true);
		await manager.close();
		expect(isRunning(pid)).toBe(false);
		const echo = tools.find((entry) => entry.name === "mcp__test__echo");
		const result = await echo?.execute(JSON.stringify({ text: "x" }), contextIn(root));
		expect(result).toMatchObject({ ok: false, errorCode: "server_unavailable" });
		expect(result?.content).toContain("was shut down");
	});
});

afterAll(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});
