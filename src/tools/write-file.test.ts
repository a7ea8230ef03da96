import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { writeFileTool } from "./write-file.js";

const setup = () => toolTestContext("snowpea-write-");

describe("write_file", () => {
	it("creates parent directories and reports bytes and lines", async () => {
		const { root, context } = setup();
		const result = await writeFileTool.execute(JSON.stringify({ path: "deep/er/x.txt", content: "é\nb\n" }), context);
		expect(result).toMatchObject({ ok: true, content: "wrote 5 bytes (2 lines) to deep/er/x.txt" });
		expect(result.details).toEqual({ path: join(root, "deep", "er", "x.txt") });
		expect(readFileSync(join(root, "deep", "er", "x.txt"), "utf8")).toBe("é\nb\n");
	});

	it("replaces an existing file and counts a last line without a line break", async () => {
		const { root, context } = setup();
		await writeFileTool.execute(JSON.stringify({ path: "a.txt", content: "old content\n" }), context);
		const result = await writeFileTool.execute(JSON.stringify({ path: "a.txt", content: "one line" }), context);
		expect(result.content).toBe("wrote 8 bytes (1 line) to a.txt");
		expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one line");
	});

	it("refuses to write over a directory", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, "d"));
		const result = await writeFileTool.execute(JSON.stringify({ path: "d", content: "x" }), context);
		expect(result).toMatchObject({ ok: false, errorCode: "is_directory" });
	});

	it("rejects a missing content as invalid arguments", async () => {
		const { context } = setup();
		const result = await writeFileTool.execute(JSON.stringify({ path: "a.txt" }), context);
		expect(result).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});

	it("is a write tool", () => {
		expect(writeFileTool.permission).toBe("write");
		expect(writeFileTool.readOnly).toBe(false);
	});
});
