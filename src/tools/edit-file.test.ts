import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { editFileTool } from "./edit-file.js";
import type { ToolContext } from "./tool.js";

function setup(content: string): { file: string; context: ToolContext } {
	const root = mkdtempSync(join(tmpdir(), "snowpea-edit-"));
	const file = join(root, "code.ts");
	writeFileSync(file, content);
	const context: ToolContext = {
		cwd: root,
		home: join(root, "home"),
		sessionId: "s",
		callId: "c",
		signal: new AbortController().signal,
		spillDir: join(root, "spill"),
	};
	return { file, context };
}

const edit = (context: ToolContext, args: Record<string, unknown>) =>
	editFileTool.execute(JSON.stringify({ path: "code.ts", ...args }), context);

describe("edit_file", () => {
	it("replaces one exact occurrence", async () => {
		const { file, context } = setup("const a = 1;\nconst b = 2;\n");
		const result = await edit(context, { old_string: "const b = 2;", new_string: "const b = $&3;" });
		expect(result).toMatchObject({ ok: true, content: "edited code.ts: replaced 1 occurrence" });
		expect(result.details).toEqual({ path: file });
		expect(readFileSync(file, "utf8")).toBe("const a = 1;\nconst b = $&3;\n");
	});

	it("names the path and suggests read_file when old_string is not found", async () => {
		const { file, context } = setup("hello\n");
		const result = await edit(context, { old_string: "goodbye", new_string: "x" });
		expect(result).toMatchObject({ ok: false, errorCode: "not_found" });
		expect(result.content).toContain("code.ts");
		expect(result.content).toContain("read_file");
		expect(readFileSync(file, "utf8")).toBe("hello\n");
	});

	it("refuses an ambiguous match, saying how many and what to do", async () => {
		const { file, context } = setup("x = 1\nx = 1\nx = 1\n");
		const result = await edit(context, { old_string: "x = 1", new_string: "x = 2" });
		expect(result).toMatchObject({ ok: false, errorCode: "ambiguous" });
		expect(result.content).toContain("3 times");
		expect(result.content).toContain("replace_all");
		expect(readFileSync(file, "utf8")).toBe("x = 1\nx = 1\nx = 1\n");
	});

	it("replaces every occurrence with replace_all", async () => {
		const { file, context } = setup("x = 1\nx = 1\n");
		const result = await edit(context, { old_string: "x = 1", new_string: "x = 2", replace_all: true });
		expect(result.content).toBe("edited code.ts: replaced 2 occurrences");
		expect(readFileSync(file, "utf8")).toBe("x = 2\nx = 2\n");
	});

	it("refuses identical old and new strings", async () => {
		const { context } = setup("same\n");
		const result = await edit(context, { old_string: "same", new_string: "same" });
		expect(result).toMatchObject({ ok: false, errorCode: "no_change" });
		expect(result.content).toContain("identical");
	});

	it("matches CRLF files with the line breaks read_file shows", async () => {
		const { file, context } = setup("one\r\ntwo\r\nthree\r\n");
		const result = await edit(context, { old_string: "one\ntwo", new_string: "1\n2" });
		expect(result.ok).toBe(true);
		expect(readFileSync(file, "utf8")).toBe("1\r\n2\r\nthree\r\n");
	});

	it("says a missing file does not exist", async () => {
		const { context } = setup("");
		const result = await editFileTool.execute(
			JSON.stringify({ path: "gone.ts", old_string: "a", new_string: "b" }),
			context,
		);
		expect(result).toMatchObject({ ok: false, errorCode: "not_found" });
		expect(result.content).toContain("gone.ts does not exist");
	});

	it("rejects a wrong type as invalid arguments", async () => {
		const { context } = setup("");
		const result = await edit(context, { old_string: "a", new_string: "b", replace_all: "yes" });
		expect(result).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});
});
