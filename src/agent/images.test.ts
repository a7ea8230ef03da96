import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
	AssistantMessage,
	ImageRef,
	Message,
	ModelRequest,
	Provider,
	ToolCall,
	UserMessage,
} from "../llm/types.js";
import { emptyUsage } from "../llm/types.js";
import { imageMarker } from "../tools/attachments.js";
import { Toolset } from "../tools/toolset.js";
import { createViewImageTool } from "../tools/view-image.js";
import type { AgentEvent } from "./events.js";
import { imagesMessage, resolveImages } from "./images.js";
import { runTurn, userText } from "./loop.js";

let root: string;
beforeEach(() => {
	root = mkdtempSync(join(tmpdir(), "snowpea-images-"));
});
afterEach(() => {
	rmSync(root, { recursive: true, force: true });
});

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** A stored copy on disk (any bytes will do: resolveImages checks the hash, not the format). */
function storedFile(name: string, content = `bytes of ${name}`, size: Partial<ImageRef> = {}): ImageRef {
	const bytes = Buffer.from(content);
	const path = join(root, `${sha(bytes)}.png`);
	writeFileSync(path, bytes);
	return { name, mime: "image/png", bytes: bytes.length, sha256: sha(bytes), path, width: 640, height: 480, ...size };
}

const refPart = (ref: ImageRef) => ({ type: "image-ref" as const, ref, marker: imageMarker(ref) });
const withImages = (text: string, ...refs: ImageRef[]): UserMessage => ({
	role: "user",
	content: [{ type: "text", text }, ...refs.map(refPart)],
});
const base64 = (ref: ImageRef, content = `bytes of ${ref.name}`) => Buffer.from(content).toString("base64");
/** A reader over the files in `root` that never caches, so each test sees the disk as it is. */
const readBytes = (path: string) => {
	try {
		return readFileSync(path);
	} catch {
		return undefined;
	}
};

describe("resolveImages", () => {
	it("turns each reference into the base64 of its stored copy, leaving text and image-free messages alone", () => {
		const ref = storedFile("a.png");
		const plain: Message = { role: "assistant", text: "hi", toolCalls: [] };
		const messages: Message[] = [userText("first"), plain, withImages("look", ref)];
		const out = resolveImages(messages, { vision: true, maxImages: 20, readBytes });
		expect(out[0]).toBe(messages[0]);
		expect(out[1]).toBe(plain);
		expect(out[2]).toEqual({
			role: "user",
			content: [
				{ type: "text", text: "look" },
				{ type: "image", mime: "image/png", data: base64(ref) },
			],
		});
		// the transcript's message is untouched
		expect((messages[2] as UserMessage).content[1]).toEqual(refPart(ref));
	});

	it("sends only markers to a model that cannot see images", () => {
		const ref = storedFile("a.png");
		const out = resolveImages([withImages("look", ref)], { vision: false, maxImages: 20, readBytes });
		expect((out[0] as UserMessage).content).toEqual([
			{ type: "text", text: "look" },
			{ type: "text", text: "[image: a.png 640×480 image/png (1 KB)] (not sent — this model cannot see images)" },
		]);
	});

	it("keeps the newest images under the per-request cap and marks the older ones", () => {
		const [one, two, three] = [storedFile("1.png"), storedFile("2.png"), storedFile("3.png")];
		const messages: Message[] = [
			withImages("old", one as ImageRef),
			{ role: "assistant", text: "ok", toolCalls: [] },
			withImages("new", two as ImageRef, three as ImageRef),
		];
		const out = resolveImages(messages, { vision: true, maxImages: 2, readBytes });
		expect((out[0] as UserMessage).content[1]).toEqual({
			type: "text",
			text: `${imageMarker(one as ImageRef)} (not sent — at most 2 images per request)`,
		});
		expect((out[2] as UserMessage).content.slice(1)).toEqual([
			{ type: "image", mime: "image/png", data: base64(two as ImageRef) },
			{ type: "image", mime: "image/png", data: base64(three as ImageRef) },
		]);
		const none = resolveImages(messages, { vision: true, maxImages: 0, readBytes });
		expect((none[2] as UserMessage).content.every((part) => part.type === "text")).toBe(true);
	});

	it("degrades a vanished stored copy to its marker, and lets an older image take the free slot", () => {
		const [old, gone] = [storedFile("old.png"), storedFile("gone.png")];
		unlinkSync(gone.path);
		const out = resolveImages([withImages("a", old), withImages("b", gone)], { vision: true, maxImages: 1, readBytes });
		expect((out[1] as UserMessage).content[1]).toEqual({
			type: "text",
			text: `${imageMarker(gone)} (no longer on disk)`,
		});
		expect((out[0] as UserMessage).content[1]).toEqual({ type: "image", mime: "image/png", data: base64(old) });
	});

	it("never sends an image over the provider limits, or a copy that no longer matches its hash", () => {
		const wide = storedFile("wide.png", "wide", { width: 9000, height: 100 });
		const heavy = storedFile("heavy.png", "x".repeat(4 * 1024 * 1024));
		const changed = storedFile("changed.png");
		writeFileSync(changed.path, "something else entirely");
		const out = resolveImages([withImages("x", wide, heavy, changed)], { vision: true, maxImages: 20, readBytes });
		expect((out[0] as UserMessage).content.slice(1)).toEqual([
			{ type: "text", text: `${imageMarker(wide)} (not sent — over the provider's limit of 8000 px)` },
			{ type: "text", text: `${imageMarker(heavy)} (not sent — over the provider's image size limit)` },
			{ type: "text", text: `${imageMarker(changed)} (not sent — the stored copy changed on disk)` },
		]);
	});

	it("keeps a request's images under 20 MB of base64 in all, dropping the oldest", () => {
		const big = (name: string) => storedFile(name, name.repeat(3 * 1024 * 1024));
		const refs = ["a", "b", "c", "d", "e", "f", "g"].map(big);
		const out = resolveImages([withImages("many", ...refs)], { vision: true, maxImages: 20, readBytes });
		const parts = (out[0] as UserMessage).content.slice(1);
		const sent = parts.filter((part) => part.type === "image");
		expect(sent).toHaveLength(5);
		expect(parts.slice(2).every((part) => part.type === "image")).toBe(true);
		expect(parts[0]).toEqual({
			type: "text",
			text: `${imageMarker(refs[0] as ImageRef)} (not sent — this request's image budget is used up)`,
		});
	});

	it("is deterministic: the same messages and files give the same request", () => {
		const refs = [storedFile("1.png"), storedFile("2.png"), storedFile("3.png")];
		const messages = [withImages("a", ...refs.slice(0, 2)), withImages("b", refs[2] as ImageRef)];
		const first = resolveImages(messages, { vision: true, maxImages: 2 });
		const second = resolveImages(messages, { vision: true, maxImages: 2 });
		expect(JSON.stringify(second)).toBe(JSON.stringify(first));
		expect(JSON.stringify(first)).toContain(base64(refs[2] as ImageRef));
	});

	it("reads a stored copy once per process but still notices when it is gone", () => {
		const ref = storedFile("cached.png", "original bytes");
		const messages = [withImages("look", ref)];
		const image = { type: "image", mime: "image/png", data: base64(ref, "original bytes") };
		expect((resolveImages(messages, { vision: true, maxImages: 5 })[0] as UserMessage).content[1]).toEqual(image);
		// rewritten behind our back: the cached copy (same sha256) is what gets sent, without reading the file again
		writeFileSync(ref.path, "tampered");
		expect((resolveImages(messages, { vision: true, maxImages: 5 })[0] as UserMessage).content[1]).toEqual(image);
		unlinkSync(ref.path);
		expect((resolveImages(messages, { vision: true, maxImages: 5 })[0] as UserMessage).content[1]).toEqual({
			type: "text",
			text: `${imageMarker(ref)} (no longer on disk)`,
		});
	});
});

describe("imagesMessage", () => {
	it("makes one user message with a header per call that carries images, in call order", () => {
		const [a, b, c] = [storedFile("a.png"), storedFile("b.png"), storedFile("c.png")];
		const calls: ToolCall[] = [
			{ id: "c1", name: "view_image", arguments: "{}" },
			{ id: "c2", name: "read_file", arguments: "{}" },
			{ id: "c3", name: "browser_screenshot", arguments: "{}" },
		];
		const message = imagesMessage(calls, [
			{ ok: true, content: "image attached", images: [a as ImageRef] },
			{ ok: true, content: "text" },
			{ ok: true, content: "2 images attached", images: [b as ImageRef, c as ImageRef] },
		]);
		expect(message).toEqual({
			role: "user",
			content: [
				{ type: "text", text: "Images from view_image (call c1):" },
				refPart(a as ImageRef),
				{ type: "text", text: "Images from browser_screenshot (call c3):" },
				refPart(b as ImageRef),
				refPart(c as ImageRef),
			],
		});
		expect(imagesMessage(calls.slice(1, 2), [{ ok: true, content: "text", images: [] }])).toBeUndefined();
	});
});

describe("runTurn with images", () => {
	function provider(replies: AssistantMessage[]): Provider & { requests: ModelRequest[] } {
		const requests: ModelRequest[] = [];
		return {
			name: "scripted",
			model: "m",
			requests,
			async *stream(request) {
				requests.push(structuredClone(request));
				const reply = replies[requests.length - 1] ?? { role: "assistant", text: "done", toolCalls: [] };
				yield { type: "done", message: reply, stopReason: "stop", usage: emptyUsage() };
			},
		};
	}

	async function turn(vision: boolean) {
		writeFileSync(
			join(root, "pic.png"),
			await sharp({ create: { width: 50, height: 40, channels: 3, background: "#123456" } })
				.png()
				.toBuffer(),
		);
		const scripted = provider([
			{ role: "assistant", text: "", toolCalls: [{ id: "v1", name: "view_image", arguments: '{"path":"pic.png"}' }] },
		]);
		const tool = createViewImageTool({ vision: () => true, directory: () => join(root, "store") });
		const events: AgentEvent[] = [];
		for await (const event of runTurn({
			provider: scripted,
			toolset: new Toolset([tool], { deferred: false, eager: [] }),
			system: [{ tier: "stable", text: "sys" }],
			history: [],
			input: userText("look at pic.png"),
			sessionId: "s",
			firstRound: 1,
			maxToolRounds: 5,
			signal: new AbortController().signal,
			toolContext: { cwd: root, home: root, sessionId: "s", spillDir: join(root, "spill") },
			vision,
		}))
			events.push(event);
		return { events, requests: scripted.requests };
	}

	it("announces the images message after the tool result and sends the image in the next request", async () => {
		const { events, requests } = await turn(true);
		const announced = events.flatMap((event) => (event.type === "message" ? [event.message] : []));
		expect(announced.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
		const stored = announced[3] as UserMessage;
		expect(stored.content[0]).toEqual({ type: "text", text: "Images from view_image (call v1):" });
		expect(stored.content[1]?.type).toBe("image-ref");
		expect(JSON.stringify(announced)).not.toContain('"type":"image"');

		const sent = requests[1]?.messages ?? [];
		expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
		expect(sent[2]).toMatchObject({ role: "tool", content: "image attached: pic.png 50×40 image/png (1 KB)" });
		const image = (sent[3] as UserMessage).content[1];
		expect(image?.type).toBe("image");
		if (image?.type !== "image") return;
		expect(Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");
	});

	it("sends the marker instead when the turn's model cannot see images", async () => {
		const { requests } = await turn(false);
		const parts = (requests[1]?.messages[3] as UserMessage | undefined)?.content ?? [];
		expect(parts[1]).toEqual({
			type: "text",
			text: "[image: pic.png 50×40 image/png (1 KB)] (not sent — this model cannot see images)",
		});
	});
});
