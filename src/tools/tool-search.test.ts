import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type ToolContext } from "./tool.js";
import { createToolSearch, searchTools } from "./tool-search.js";
import { Toolset } from "./toolset.js";

const tool = (name: string, description: string, group?: string) =>
	defineTool({
		name,
		description,
		parameters: z.object({ url: z.string().optional() }),
		permission: "network",
		readOnly: true,
		group,
		async run() {
			return { ok: true, content: name };
		},
	});

const catalog = [
	tool("read_file", "Read a file"),
	tool("browser_navigate", "Open a url in the browser page", "browser"),
	tool("browser_click", "Click an element in the browser page", "browser"),
	tool("git_diff", "Show the working tree diff", "git"),
	tool("mcp__github__search_issues", "Search GitHub issues", "mcp:github"),
];
const context: ToolContext = {
	cwd: "/",
	home: "/",
	sessionId: "s",
	callId: "c",
	signal: new AbortController().signal,
	spillDir: "/tmp",
};

describe("tool_search", () => {
	it("selects exact tools in the requested order and skips unknown names", () => {
		expect(searchTools("select:git_diff, nope ,browser_click", catalog).map((found) => found.name)).toEqual([
			"git_diff",
			"browser_click",
		]);
	});

	it("ranks keyword matches by name first and honours required terms", () => {
		expect(searchTools("click", catalog).map((found) => found.name)).toEqual(["browser_click"]);
		expect(searchTools("+browser url", catalog).map((found) => found.name)).toEqual([
			"browser_navigate",
			"browser_click",
		]);
		expect(searchTools("+github browser", catalog).map((found) => found.name)).toEqual(["mcp__github__search_issues"]);
		expect(searchTools("zebra", catalog)).toEqual([]);
	});

	it("loads matches for the session, shows their schemas, and says so when nothing matched", async () => {
		const toolset: Toolset = new Toolset([...catalog, createToolSearch(() => toolset)], { deferred: true, eager: [] });
		const search = toolset.get("tool_search")!;
		const result = await search.execute(JSON.stringify({ query: "select:git_diff" }), context);
		expect(result.content).toContain("Loaded 1 tool(s) for this session");
		expect(result.content).toContain('input schema: {"properties":{"url":{"type":"string"}},"type":"object"}');
		expect(toolset.loaded).toEqual(["git_diff"]);
		const none = await search.execute(JSON.stringify({ query: "zebra" }), context);
		expect(none.ok).toBe(true);
		expect(none.content).toContain("No tool matched 'zebra'");
		expect((await search.execute(JSON.stringify({ query: "  " }), context)).ok).toBe(false);
	});
});

describe("toolset", () => {
	it("sends core and eager tools, names deferred groups with whole-group counts", () => {
		const toolset = new Toolset(catalog, { deferred: true, eager: ["mcp__github__search_issues"] });
		expect(toolset.sent().map((sent) => sent.name)).toEqual(["read_file", "mcp__github__search_issues"]);
		expect(toolset.deferredLine()).toBe("Deferred (load with tool_search): browser (2), git (1)");
		toolset.load("browser_click");
		expect(toolset.deferredLine()).toBe("Deferred (load with tool_search): browser (2), git (1)");
		expect(toolset.sent().map((sent) => sent.name)).toEqual([
			"read_file",
			"mcp__github__search_issues",
			"browser_click",
		]);
	});

	it("sends everything with tools.deferred false and has no deferred line", () => {
		const toolset = new Toolset(catalog, { deferred: false, eager: [] });
		expect(toolset.sent()).toHaveLength(catalog.length);
		expect(toolset.deferredLine()).toBeUndefined();
		expect(toolset.load("git_diff")).toBe(false);
	});

	it("keeps the same definitions array while nothing is loaded", () => {
		const toolset = new Toolset(catalog, { deferred: true, eager: [] }, ["git_diff"]);
		const first = toolset.definitions();
		expect(toolset.definitions()).toBe(first);
		toolset.load("browser_click");
		expect(toolset.definitions()).not.toBe(first);
		expect(toolset.definitions().map((definition) => definition.name)).toEqual([
			"read_file",
			"git_diff",
			"browser_click",
		]);
	});
});
