import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { createGrepTool, ripgrepAvailable } from "./grep.js";
import type { ToolContext } from "./tool.js";

const builtin = createGrepTool({ engine: "builtin" });
const ripgrep = createGrepTool({ engine: "ripgrep" });

function tree(files: Record<string, string | Buffer>): { root: string; context: ToolContext } {
	const { root, context } = toolTestContext("snowpea-grep-");
	for (const [path, content] of Object.entries(files)) {
		mkdirSync(dirname(join(root, path)), { recursive: true });
		writeFileSync(join(root, path), content);
	}
	return { root, context };
}

const sample = () =>
	tree({
		"src/a.ts": "const foo = 1;\nbar\nfoo()\n",
		"src/b.js": "let x = foo;\n",
		"src/deep/c.ts": Array.from({ length: 12 }, (_, i) => (i === 8 || i === 9 ? "foo" : "-")).join("\n"),
		".hidden/h.txt": "foo hidden\n",
		".gitignore": "src/b.js\n",
		"node_modules/m/index.js": "foo\n",
		".git/config": "foo\n",
		"image.bin": Buffer.from("foo\u0000bar\n"),
		"huge.txt": `foo\n${"x".repeat(2 * 1024 * 1024)}`,
		"long.txt": `foo${"y".repeat(1000)}\n`,
		"we:ird.txt": "foo: colon in the name\n",
		"crlf.txt": "foo\r\nnot\r\n",
		"uni.txt": "漢字 foo 😀\n",
	});

const grep = (tool: typeof builtin, context: ToolContext, args: Record<string, unknown>) =>
	tool.execute(JSON.stringify(args), context);

describe("grep (built-in search)", () => {
	it("answers path:line:text sorted by path then line, skipping .git, node_modules, binary and huge files", async () => {
		const { context } = sample();
		const result = await grep(builtin, context, { pattern: "foo" });
		expect(result.ok).toBe(true);
		expect(result.content).toBe(
			[
				".hidden/h.txt:1:foo hidden",
				"crlf.txt:1:foo",
				`long.txt:1:foo${"y".repeat(497)} [… 503 more characters]`,
				"src/a.ts:1:const foo = 1;",
				"src/a.ts:3:foo()",
				"src/b.js:1:let x = foo;",
				"src/deep/c.ts:9:foo",
				"src/deep/c.ts:10:foo",
				"uni.txt:1:漢字 foo 😀",
				"we:ird.txt:1:foo: colon in the name",
			].join("\n"),
		);
		expect(result.display).toBe("10 matches in 8 files");
	});

	it("filters by glob: a name glob anywhere, a path glob from the root, and ! to exclude", async () => {
		const { context } = sample();
		const byName = await grep(builtin, context, { pattern: "foo", glob: "*.ts" });
		expect(byName.content.split("\n").map((line) => line.split(":")[0])).toEqual([
			"src/a.ts",
			"src/a.ts",
			"src/deep/c.ts",
			"src/deep/c.ts",
		]);
		const byPath = await grep(builtin, context, { pattern: "foo", glob: "src/*.{ts,js}" });
		expect(byPath.content).toBe("src/a.ts:1:const foo = 1;\nsrc/a.ts:3:foo()\nsrc/b.js:1:let x = foo;");
		const excluded = await grep(builtin, context, { pattern: "foo", glob: "!*.txt" });
		expect(excluded.content).not.toContain(".txt");
		expect(excluded.content).toContain("src/b.js");
	});

	it("searches one directory or one file given as path", async () => {
		const { context } = sample();
		const inDirectory = await grep(builtin, context, { pattern: "foo\\(", path: "src" });
		expect(inDirectory.content).toBe("src/a.ts:3:foo()");
		const inFile = await grep(builtin, context, { pattern: "^foo", path: "src/deep/c.ts" });
		expect(inFile.content).toBe("src/deep/c.ts:9:foo\nsrc/deep/c.ts:10:foo");
	});

	it("says so when nothing matches, and fails on a bad pattern or a missing path", async () => {
		const { context } = sample();
		expect(await grep(builtin, context, { pattern: "zzz" })).toMatchObject({
			ok: true,
			content: "no matches for zzz",
		});
		const bad = await grep(builtin, context, { pattern: "(" });
		expect(bad).toMatchObject({ ok: false, errorCode: "search_failed" });
		expect(bad.content).toContain("invalid regular expression");
		expect(await grep(builtin, context, { pattern: "x", path: "nope" })).toMatchObject({
			ok: false,
			errorCode: "not_found",
		});
	});

	it("caps long output with head and tail lines and spills everything", async () => {
		const lines = Array.from({ length: 5000 }, (_, i) => `match ${i}`).join("\n");
		const { context } = tree({ "many.txt": lines });
		const result = await grep(builtin, context, { pattern: "match" });
		expect(result.content.startsWith("many.txt:1:match 0\n")).toBe(true);
		expect(result.content.endsWith("many.txt:5000:match 4999")).toBe(true);
		expect(result.content).toMatch(/\[… \d+ lines \(\d+ bytes\) omitted — full output in .+; read_file it/);
		const spill = readFileSync(result.details?.spillPath as string, "utf8");
		expect(spill.split("\n")).toHaveLength(5000);
		expect(spill.split("\n")[2500]).toBe("many.txt:2501:match 2500");
	});

	it("rejects an empty pattern as invalid arguments", async () => {
		const { context } = sample();
		expect(await grep(builtin, context, { pattern: "" })).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});
});

describe.skipIf(!ripgrepAvailable())("grep (ripgrep)", () => {
	const cases: Record<string, unknown>[] = [
		{ pattern: "foo" },
		{ pattern: "^foo$" },
		{ pattern: "foo", glob: "*.ts" },
		{ pattern: "foo", glob: "src/**" },
		{ pattern: "foo", glob: "!*.txt" },
		{ pattern: "foo", path: "src" },
		{ pattern: "foo", path: "src/deep/c.ts" },
		{ pattern: "漢字" },
		{ pattern: "zzz" },
	];

	it.each(cases)("gives the same answer as the built-in search for %j", async (args) => {
		const { context } = sample();
		const fromRipgrep = await grep(ripgrep, context, args);
		const fromBuiltin = await grep(builtin, context, args);
		expect(fromRipgrep.ok).toBe(true);
		expect(fromRipgrep.content).toBe(fromBuiltin.content);
		expect(fromRipgrep.details?.engine).toBe("ripgrep");
	});

	it("reports a bad pattern as a failed search", async () => {
		const { context } = sample();
		expect(await grep(ripgrep, context, { pattern: "(" })).toMatchObject({ ok: false, errorCode: "search_failed" });
	});
});

describe("grep tool", () => {
	it("falls back to the built-in search when rg is not on PATH", async () => {
		const { context } = sample();
		const path = process.env.PATH;
		process.env.PATH = "";
		try {
			expect(ripgrepAvailable()).toBe(false);
			const result = await grep(createGrepTool(), context, { pattern: "bar" });
			expect(result.content).toBe("src/a.ts:2:bar");
			expect(result.details?.engine).toBe("builtin");
		} finally {
			process.env.PATH = path;
		}
	});

	it("is a read-only read tool", () => {
		expect(builtin.permission).toBe("read");
		expect(builtin.readOnly).toBe(true);
	});
});
