import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { readFileTool } from "./read-file.js";
import type { ToolContext } from "./tool.js";

const setup = () => toolTestContext("snowpea-read-");

const read = (context: ToolContext, args: Record<string, unknown>) =>
	readFileTool.execute(JSON.stringify(args), context);

describe("read_file", () => {
	it("shows numbered lines with right-aligned numbers and a tab", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "a.txt"), "first\nsecond\n");
		const result = await read(context, { path: "a.txt" });
		expect(result.ok).toBe(true);
		expect(result.content).toBe("     1\tfirst\n     2\tsecond");
		expect(result.details).toEqual({
			path: join(root, "a.txt"),
			lines: 2,
			sha256: createHash("sha256").update("first\nsecond\n").digest("hex"),
		});
	});

	it("pages with a 1-based offset and a limit, saying how to continue", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "n.txt"), Array.from({ length: 10 }, (_, i) => `row ${i + 1}`).join("\n"));
		const result = await read(context, { path: "n.txt", offset: 3, limit: 2 });
		expect(result.content).toBe("     3\trow 3\n     4\trow 4\n[showing lines 3–4 of 10; continue with offset=5]");
		const rest = await read(context, { path: "n.txt", offset: 5 });
		expect(rest.content.split("\n")[0]).toBe("     5\trow 5");
		expect(rest.content).toContain("    10\trow 10");
		expect(rest.content).not.toContain("continue");
	});

	it("shows at most 2,000 lines by default", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "big.txt"), Array.from({ length: 2500 }, (_, i) => `${i + 1}`).join("\n"));
		const result = await read(context, { path: "big.txt" });
		expect(result.content).toContain("  2000\t2000");
		expect(result.content).not.toContain("  2001\t2001");
		expect(result.content).toContain("showing lines 1–2000 of 2500; continue with offset=2001");
	});

	it("stops at the last whole line within 60,000 characters", async () => {
		const { root, context } = setup();
		const line = "x".repeat(1500);
		writeFileSync(join(root, "wide.txt"), Array.from({ length: 100 }, () => line).join("\n"));
		const result = await read(context, { path: "wide.txt" });
		expect(result.content.length).toBeLessThanOrEqual(60_000);
		const match = /showing lines 1–(\d+) of 100; continue with offset=(\d+)/.exec(result.content);
		expect(match).not.toBeNull();
		const last = Number(match![1]);
		expect(last).toBeGreaterThan(30);
		expect(Number(match![2])).toBe(last + 1);
		expect(result.content).toContain(`${String(last).padStart(6)}\t${line}\n`);
	});

	it("cuts a long line and recovers a 20 KB single line with char_offset", async () => {
		const { root, context } = setup();
		const huge = Array.from({ length: 20_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
		writeFileSync(join(root, "min.js"), `${huge}\nafter\n`);
		const first = await read(context, { path: "min.js" });
		expect(first.content).toContain("read the rest with offset=1, char_offset=2000");
		expect(first.content).toContain("     2\tafter");
		let recovered = first.content.split("\n")[0]!.slice("     1\t".length, "     1\t".length + 2000);
		let charOffset = 2000;
		for (let page = 0; page < 5; page++) {
			const next = await read(context, { path: "min.js", offset: 1, char_offset: charOffset });
			expect(next.ok).toBe(true);
			const [body, note] = next.content.split("\n");
			recovered += body!.slice("     1\t".length);
			const more = /continue with offset=1, char_offset=(\d+)/.exec(note!);
			if (!more) {
				expect(note).toContain("end of line");
				break;
			}
			charOffset = Number(more[1]);
		}
		expect(recovered).toBe(huge);
	});

	it("pages a long line 20,000 characters at a time", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "long.txt"), "y".repeat(50_000));
		const page = await read(context, { path: "long.txt", offset: 1, char_offset: 0 });
		expect(page.content).toContain("[line 1: characters 0–20000 of 50000; continue with offset=1, char_offset=20000]");
		const past = await read(context, { path: "long.txt", offset: 1, char_offset: 50_000 });
		expect(past.ok).toBe(false);
		expect(past.content).toContain("past the end of line 1");
	});

	it("refuses an image and points to view_image", async () => {
		const { root, context } = setup();
		const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 1)]);
		writeFileSync(join(root, "shot.dat"), png);
		const result = await read(context, { path: "shot.dat" });
		expect(result.ok).toBe(false);
		expect(result.content).toBe("shot.dat is an image (image/png, 3 KB); use view_image to see it");
	});

	it("refuses a binary file", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "blob.bin"), Buffer.from([1, 2, 0, 3]));
		const result = await read(context, { path: "blob.bin" });
		expect(result.ok).toBe(false);
		expect(result.content).toContain("blob.bin is a binary file");
	});

	it("gives clear errors for a missing file, a directory and an offset past the end", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, "dir"));
		writeFileSync(join(root, "short.txt"), "one\ntwo\n");
		const missing = await read(context, { path: "nope.txt" });
		expect(missing).toMatchObject({ ok: false, errorCode: "not_found" });
		expect(missing.content).toContain("nope.txt does not exist");
		const directory = await read(context, { path: "dir" });
		expect(directory).toMatchObject({ ok: false, errorCode: "is_directory" });
		expect(directory.content).toContain("use list_dir");
		const past = await read(context, { path: "short.txt", offset: 3 });
		expect(past.ok).toBe(false);
		expect(past.content).toContain("offset 3 is past the end: short.txt has 2 lines");
	});

	it("shows paths outside cwd as absolute and reads an empty file", async () => {
		const { root, context } = setup();
		writeFileSync(join(root, "empty.txt"), "");
		const empty = await read({ ...context, cwd: join(root, "home") }, { path: join(root, "empty.txt") });
		expect(empty.ok).toBe(true);
		expect(empty.content).toBe(`${join(root, "empty.txt")} is empty (0 lines)`);
	});

	it("turns bad arguments into invalid_arguments results", async () => {
		const { context } = setup();
		expect(await readFileTool.execute("{not json", context)).toMatchObject({
			ok: false,
			errorCode: "invalid_arguments",
		});
		expect(await read(context, { path: 7 })).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		expect(await read(context, { path: "a", offset: 0 })).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});

	it("is a read-only read tool whose description states its limits", () => {
		expect(readFileTool.permission).toBe("read");
		expect(readFileTool.readOnly).toBe(true);
		expect(readFileTool.description).toContain("2,000 lines");
	});
});
