import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "./tool.js";
import { createViewImageTool } from "./view-image.js";

let root: string;
let store: string;
let context: ToolContext;

beforeEach(() => {
	root = mkdtempSync(join(tmpdir(), "snowpea-view-image-"));
	store = join(root, "attachments");
	context = {
		cwd: root,
		home: join(root, "home"),
		sessionId: "s",
		callId: "c",
		signal: new AbortController().signal,
		spillDir: join(root, "spill"),
	};
});
afterEach(() => {
	rmSync(root, { recursive: true, force: true });
});

const tool = (vision = true) =>
	createViewImageTool({ vision: () => vision, directory: () => store, model: () => "openai:deepseek-chat" });

async function writePng(name: string, width: number, height: number): Promise<Buffer> {
	const bytes = await sharp({ create: { width, height, channels: 4, background: "#ff8800" } })
		.png()
		.toBuffer();
	writeFileSync(join(root, name), bytes);
	return bytes;
}

describe("view_image", () => {
	it("answers with one line and hands the stored, downscaled image to the loop", async () => {
		await writePng("shot.png", 2000, 1000);
		const result = await tool().execute(JSON.stringify({ path: "shot.png" }), context);
		expect(result.ok).toBe(true);
		expect(result.images).toHaveLength(1);
		const ref = result.images?.[0];
		expect(ref).toMatchObject({ name: "shot.png", mime: "image/png", width: 1568, height: 784 });
		const kilobytes = Math.max(1, Math.round((ref?.bytes ?? 0) / 1024));
		expect(result.content).toBe(`image attached: shot.png 1568×784 image/png (${kilobytes} KB)`);
		expect(result.content).not.toContain("\n");
		expect(ref?.path.startsWith(store)).toBe(true);
		expect(existsSync(ref?.path ?? "")).toBe(true);
		expect(JSON.stringify(result)).not.toContain(
			readFileSync(ref?.path ?? "")
				.toString("base64")
				.slice(0, 40),
		);
	});

	it('sends at most 768 px with detail "low"', async () => {
		await writePng("shot.png", 2000, 1000);
		const result = await tool().execute(JSON.stringify({ path: "shot.png", detail: "low" }), context);
		expect(result.images?.[0]).toMatchObject({ width: 768, height: 384 });
	});

	it("refuses on a model that cannot see images, naming the model and a way out", async () => {
		await writePng("shot.png", 20, 20);
		const result = await tool(false).execute(JSON.stringify({ path: "shot.png" }), context);
		expect(result.ok).toBe(false);
		expect(result.errorCode).toBe("no_vision");
		expect(result.images).toBeUndefined();
		expect(result.content).toBe(
			"view_image: the model openai:deepseek-chat cannot see images; switch to a vision model (e.g. anthropic:claude-sonnet-4-5 or openai:gpt-4o) to look at shot.png",
		);
		expect(existsSync(store)).toBe(false);
	});

	it("explains a missing file, a file that is not an image, and one over 20 MiB", async () => {
		const missing = await tool().execute(JSON.stringify({ path: "nope.png" }), context);
		expect([missing.ok, missing.errorCode]).toEqual([false, "not_found"]);
		expect(missing.content).toBe("view_image: nope.png does not exist; check the path (glob or list_dir)");

		writeFileSync(join(root, "notes.png"), "plain text, whatever the name says");
		const text = await tool().execute(JSON.stringify({ path: "notes.png" }), context);
		expect([text.ok, text.errorCode]).toEqual([false, "not_an_image"]);
		expect(text.content).toMatch(/^view_image: notes\.png is not an image/);

		writeFileSync(join(root, "huge.png"), Buffer.alloc(21 * 1024 * 1024));
		const huge = await tool().execute(JSON.stringify({ path: "huge.png" }), context);
		expect([huge.ok, huge.errorCode]).toEqual([false, "too_large"]);
		expect(huge.content).toMatch(/^view_image: huge\.png is 21\.0 MiB; images over 20 MiB are refused/);
		for (const result of [missing, text, huge]) {
			expect(result.images).toBeUndefined();
			expect(result.content).not.toContain("\n");
		}
	});

	it("is a read-only tool with read permission", () => {
		const viewImage = tool();
		expect([viewImage.name, viewImage.permission, viewImage.readOnly]).toEqual(["view_image", "read", true]);
		expect(viewImage.definition.parameters).toMatchObject({ required: ["path"] });
	});
});
