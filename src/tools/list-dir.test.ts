import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { formatSize, listDirTool } from "./list-dir.js";
import type { ToolContext } from "./tool.js";

const setup = () => toolTestContext("snowpea-list-");

const list = (context: ToolContext, args: Record<string, unknown> = {}) =>
	listDirTool.execute(JSON.stringify(args), context);

describe("list_dir", () => {
	it("lists sorted entries, directories with a slash, files with their size", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, "src"));
		writeFileSync(join(root, "b.txt"), "x".repeat(2048));
		writeFileSync(join(root, "a.txt"), "hello");
		symlinkSync("a.txt", join(root, "c-link"));
		const result = await list(context);
		expect(result.ok).toBe(true);
		expect(result.content).toBe("a.txt\t5 B\nb.txt\t2.0 KB\nc-link -> a.txt\nsrc/");
		expect(result.display).toBe("4 entries");
	});

	it("lists a subdirectory given as path", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, "sub", "inner"), { recursive: true });
		expect((await list(context, { path: "sub" })).content).toBe("inner/");
		expect((await list(context, { path: "sub/inner" })).content).toBe("sub/inner is empty");
	});

	it("lists at most 500 entries with a note", async () => {
		const { root, context } = setup();
		for (let index = 0; index < 503; index++) writeFileSync(join(root, `f${String(index).padStart(3, "0")}`), "");
		const lines = (await list(context)).content.split("\n");
		expect(lines).toHaveLength(501);
		expect(lines[499]).toBe("f499\t0 B");
		expect(lines[500]).toBe("[showing the first 500 of 503 entries; use glob to narrow down]");
	});

	it("fails clearly on a missing path or a file", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "file.txt"), "");
		expect(await list(context, { path: "nope" })).toMatchObject({ ok: false, errorCode: "not_found" });
		const file = await list(context, { path: "file.txt" });
		expect(file).toMatchObject({ ok: false, errorCode: "not_a_directory" });
		expect(file.content).toContain("use read_file");
	});

	it("formats sizes for people", () => {
		expect(formatSize(0)).toBe("0 B");
		expect(formatSize(1536)).toBe("1.5 KB");
		expect(formatSize(5 * 1024 * 1024)).toBe("5.0 MB");
	});

	it("is a read-only read tool", () => {
		expect(listDirTool.permission).toBe("read");
		expect(listDirTool.readOnly).toBe(true);
	});
});
