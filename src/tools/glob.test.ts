import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { globTool } from "./glob.js";
import { expandBraces, globToRegExp } from "./glob-pattern.js";
import type { ToolContext } from "./tool.js";

function tree(paths: string[]): { root: string; context: ToolContext } {
	const { root, context } = toolTestContext("snowpea-glob-");
	for (const path of paths) {
		mkdirSync(dirname(join(root, path)), { recursive: true });
		writeFileSync(join(root, path), "x");
	}
	return { root, context };
}

const sample = () =>
	tree([
		"README.md",
		"CHANGES.md",
		"notes.md",
		"src/index.ts",
		"src/util.ts",
		"src/util.test.ts",
		"src/view.tsx",
		"src/lib/deep/x.ts",
		"src/lib/y.js",
		"test/a1.py",
		"test/a2.py",
		"test/a10.py",
		".config/settings.json",
		".git/HEAD",
		"node_modules/pkg/index.ts",
	]);

const glob = async (context: ToolContext, args: Record<string, unknown>) => {
	const result = await globTool.execute(JSON.stringify(args), context);
	return result.content;
};

describe("globToRegExp", () => {
	const matches = (pattern: string, path: string) => globToRegExp(pattern).test(path);

	it("keeps * and ? inside one segment", () => {
		expect(matches("*.ts", "a.ts")).toBe(true);
		expect(matches("*.ts", "src/a.ts")).toBe(false);
		expect(matches("a?.py", "a1.py")).toBe(true);
		expect(matches("a?.py", "a10.py")).toBe(false);
	});

	it("lets ** span any number of folders, none included", () => {
		expect(matches("**/*.ts", "a.ts")).toBe(true);
		expect(matches("**/*.ts", "x/y/a.ts")).toBe(true);
		expect(matches("src/**/x.ts", "src/x.ts")).toBe(true);
		expect(matches("src/**/x.ts", "src/a/b/x.ts")).toBe(true);
		expect(matches("src/**", "src/a/b")).toBe(true);
		expect(matches("src/**", "other/a")).toBe(false);
	});

	it("expands braces, nested too, and understands classes", () => {
		expect(expandBraces("a.{ts,{js,jsx}}")).toEqual(["a.ts", "a.js", "a.jsx"]);
		expect(matches("[A-Z]*.md", "README.md")).toBe(true);
		expect(matches("[A-Z]*.md", "notes.md")).toBe(false);
		expect(matches("[!a-z]*", "Xy")).toBe(true);
		expect(matches("[!a-z]*", "xy")).toBe(false);
	});

	it("treats regular-expression characters literally", () => {
		expect(matches("a+b(1).txt", "a+b(1).txt")).toBe(true);
		expect(matches("a.txt", "abtxt")).toBe(false);
	});
});

describe("glob", () => {
	it("finds files at any depth, sorted, relative to cwd, skipping .git and node_modules", async () => {
		const { context } = sample();
		expect(await glob(context, { pattern: "**/*.ts" })).toBe(
			["src/index.ts", "src/lib/deep/x.ts", "src/util.test.ts", "src/util.ts"].join("\n"),
		);
	});

	it("supports braces, ?, classes and hidden files", async () => {
		const { context } = sample();
		expect(await glob(context, { pattern: "src/*.{ts,tsx}" })).toBe(
			"src/index.ts\nsrc/util.test.ts\nsrc/util.ts\nsrc/view.tsx",
		);
		expect(await glob(context, { pattern: "test/a?.py" })).toBe("test/a1.py\ntest/a2.py");
		expect(await glob(context, { pattern: "[A-Z]*.md" })).toBe("CHANGES.md\nREADME.md");
		expect(await glob(context, { pattern: "**/*.json" })).toBe(".config/settings.json");
	});

	it("matches relative to path but answers relative to cwd", async () => {
		const { context } = sample();
		expect(await glob(context, { pattern: "*.js", path: "src/lib" })).toBe("src/lib/y.js");
		expect(await glob(context, { pattern: "**/x.ts", path: "src" })).toBe("src/lib/deep/x.ts");
	});

	it("takes an absolute pattern", async () => {
		const { root, context } = sample();
		expect(await glob({ ...context, cwd: join(root, "test") }, { pattern: `${root}/src/lib/*.js` })).toBe(
			join(root, "src/lib/y.js"),
		);
	});

	it("includes links to files but does not enter links to directories", async () => {
		const { root, context } = sample();
		symlinkSync(join(root, "README.md"), join(root, "link.md"));
		symlinkSync(root, join(root, "loop"));
		expect(await glob(context, { pattern: "**/link.md" })).toBe("link.md");
		expect(await glob(context, { pattern: "**/README.md" })).toBe("README.md");
	});

	it("says so when nothing matches and fails on a missing path", async () => {
		const { context } = sample();
		expect(await glob(context, { pattern: "*.rs" })).toBe("no files match *.rs");
		const missing = await globTool.execute(JSON.stringify({ pattern: "*", path: "nope" }), context);
		expect(missing).toMatchObject({ ok: false, errorCode: "not_found" });
	});

	it("lists at most 1,000 files with a note", async () => {
		const { context } = tree(Array.from({ length: 1005 }, (_, i) => `many/f${String(i).padStart(4, "0")}.txt`));
		const content = await glob(context, { pattern: "many/*.txt" });
		const lines = content.split("\n");
		expect(lines).toHaveLength(1001);
		expect(lines[999]).toBe("many/f0999.txt");
		expect(lines[1000]).toBe("[showing the first 1000 of 1005 files; narrow the pattern or the path]");
	});

	it("is a read-only read tool", () => {
		expect(globTool.permission).toBe("read");
		expect(globTool.readOnly).toBe(true);
	});
});
