import { describe, expect, it } from "vitest";
import type { ToolContext } from "../tool.js";
import { MAX_DESCRIPTION_CHARACTERS, mcpTool, mcpToolName } from "./mcp-tool.js";

const context: ToolContext = {
	cwd: "/tmp",
	home: "/tmp/home",
	sessionId: "s",
	callId: "c",
	signal: new AbortController().signal,
	spillDir: "/tmp/spill",
};

describe("mcpToolName", () => {
	it("joins server and tool, replacing characters the providers refuse", () => {
		expect(mcpToolName("github", "create_issue")).toBe("mcp__github__create_issue");
		expect(mcpToolName("docs", "search.v2 (beta)")).toBe("mcp__docs__search_v2__beta_");
	});

	it("keeps long names at 64 characters, distinct and the same every time", () => {
		const first = mcpToolName("server", `${"x".repeat(80)}-one`);
		const second = mcpToolName("server", `${"x".repeat(80)}-two`);
		expect(first).toHaveLength(64);
		expect(second).toHaveLength(64);
		expect(first).not.toBe(second);
		expect(mcpToolName("server", `${"x".repeat(80)}-one`)).toBe(first);
	});
});

describe("mcpTool", () => {
	const listed = {
		name: "lookup",
		description: "d".repeat(1500),
		inputSchema: { type: "object" as const, $schema: "http://json-schema.org/draft-07/schema#" },
	};

	it("clips the description to 1,000 characters and sends an object schema without $schema", () => {
		const tool = mcpTool("docs", listed, async () => ({ ok: true, content: "" }));
		expect(Array.from(tool.description)).toHaveLength(MAX_DESCRIPTION_CHARACTERS);
		expect(tool.description.endsWith("…")).toBe(true);
		expect(tool.definition).toEqual({
			name: "mcp__docs__lookup",
			description: tool.description,
			parameters: { type: "object", properties: {} },
		});
		expect(tool.permission).toBe("network");
	});

	it("names the tool when the server gives no description", () => {
		const tool = mcpTool("docs", { ...listed, description: undefined }, async () => ({ ok: true, content: "" }));
		expect(tool.description).toBe("lookup (MCP server docs)");
	});

	it("passes an empty argument text as {} and turns an exception inside the call into a failed result", async () => {
		const seen: unknown[] = [];
		const tool = mcpTool("docs", listed, async (args) => {
			seen.push(args);
			throw new Error("boom");
		});
		const result = await tool.execute("", context);
		expect(seen).toEqual([{}]);
		expect(result).toMatchObject({ ok: false, errorCode: "tool_failed", content: "mcp__docs__lookup failed: boom" });
	});

	it("refuses null, strings and arrays as arguments without calling the server", async () => {
		let calls = 0;
		const tool = mcpTool("docs", listed, async () => {
			calls++;
			return { ok: true, content: "" };
		});
		for (const raw of ["null", '"text"', "[]"]) {
			expect(await tool.execute(raw, context)).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		}
		expect(calls).toBe(0);
	});
});
