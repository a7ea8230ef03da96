import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { beforeEach, describe, expect, it } from "vitest";
import type { ImageRefPart, TextPart } from "../../llm/types.js";
import { attachFile, expandAtPaths, findAtPaths } from "./at-paths.js";

let cwd: string;
let store: string;
beforeEach(() => {
	cwd = mkdtempSync(join(tmpdir(), "snowpea-at-"));
	store = join(mkdtempSync(join(tmpdir(), "snowpea-store-")), "attachments");
	mkdirSync(join(cwd, "src"));
	writeFileSync(join(cwd, "src", "a.ts"), "const a = 1;\r\nexport { a };\n");
});
const options = () => ({ cwd, attachmentDirectory: store });

describe("findAtPaths", () => {
	it("finds references at the start or after whitespace, quoted or not, each once", () => {
		expect(findAtPaths("@a.ts and @src/b.ts, mail me at me@example.com and @a.ts")).toEqual(["a.ts", "src/b.ts,"]);
		expect(findAtPaths('look at @"my notes.txt" please')).toEqual(["my notes.txt"]);
	});
});

describe("expandAtPaths", () => {
	it("inlines a text file with line numbers after the prompt, which stays as typed", async () => {
		const expanded = await expandAtPaths("explain @src/a.ts.", options());
		expect(expanded.content[0]).toEqual({ type: "text", text: "explain @src/a.ts." });
		expect((expanded.content[1] as TextPart).text).toBe(
			"Contents of src/a.ts:\n     1\tconst a = 1;\n     2\texport { a };",
		);
		expect(expanded.notices).toEqual(["attached src/a.ts (2 lines)"]);
	});

	it("attaches an image as an image-ref part stored in the attachment store", async () => {
		const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: { r: 9, g: 9, b: 9 } } })
			.png()
			.toBuffer();
		writeFileSync(join(cwd, "shot.png"), png);
		const expanded = await expandAtPaths("what is in @shot.png", options());
		expect(expanded.content).toHaveLength(2);
		const part = expanded.content[1] as ImageRefPart;
		expect(part.type).toBe("image-ref");
		expect(part.ref).toMatchObject({ name: "shot.png", mime: "image/png", width: 8, height: 6 });
		expect(part.ref.path.startsWith(store)).toBe(true);
		expect(existsSync(part.ref.path)).toBe(true);
		expect(part.marker).toMatch(/^\[image: shot\.png 8×6 image\/png/);
		expect(expanded.notices).toEqual(["attached image shot.png (8×6)"]);
	});

	it("refuses secrets with one line and attaches nothing from them", async () => {
		writeFileSync(join(cwd, ".env.local"), "API_KEY=sk-secret\n");
		mkdirSync(join(cwd, ".ssh"));
		writeFileSync(join(cwd, ".ssh", "config"), "Host x\n");
		writeFileSync(join(cwd, "deploy.pem"), "-----BEGIN PRIVATE KEY-----\n");
		symlinkSync(join(cwd, ".env.local"), join(cwd, "innocent.txt"));
		const expanded = await expandAtPaths(
			"use @.env.local and @.ssh/config and @deploy.pem and @innocent.txt and @.env",
			options(),
		);
		expect(expanded.content).toHaveLength(1);
		expect(JSON.stringify(expanded.content)).not.toContain("sk-secret");
		expect(expanded.notices).toHaveLength(5);
		for (const notice of expanded.notices) {
			expect(notice).toMatch(/^refused @\S+: it may hold secrets/);
			expect(notice).not.toContain("\n");
		}
	});

	it("leaves references to nothing as text and says so", async () => {
		const expanded = await expandAtPaths("install @types/node", options());
		expect(expanded.content).toEqual([{ type: "text", text: "install @types/node" }]);
		expect(expanded.notices).toEqual(["@types/node: no such file; sent as plain text"]);
	});
});

describe("attachFile", () => {
	it("refuses directories and binary files", async () => {
		writeFileSync(join(cwd, "blob.bin"), Buffer.from([1, 2, 0, 3]));
		expect(await attachFile("src", options())).toEqual({ error: "@src is a directory; attach files one by one" });
		expect(await attachFile("blob.bin", options())).toEqual({
			error: "@blob.bin is a binary file; only text files and images can be attached",
		});
	});

	it("cuts a long file at a line boundary and says how to read the rest", async () => {
		writeFileSync(join(cwd, "long.txt"), "0123456789\n".repeat(100));
		const attached = await attachFile("long.txt", { ...options(), maxTextBytes: 55 });
		if ("error" in attached) throw new Error(attached.error);
		const text = (attached.parts[0] as TextPart).text;
		expect(text.split("\n").filter((line) => /^\s+\d+\t/.test(line))).toHaveLength(5);
		expect(text).toContain("read_file long.txt with offset 6");
		expect(attached.notice).toBe("attached long.txt (5 lines, cut)");
	});
});
