import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { ContentPart, ImagePart, ImageRefPart, Message, ToolCall, UserMessage } from "../llm/types.js";
import { imageMarker } from "../tools/attachments.js";
import type { ToolResult } from "../tools/tool.js";

/** Largest base64 image the providers take (Anthropic and OpenAI: 5 MB per image). */
export const MAX_IMAGE_BASE64 = 5 * 1024 * 1024;
/** Largest edge the providers take, in pixels. */
export const MAX_IMAGE_EDGE = 8000;
/** Base64 of all images in one request; keeps the body well under Anthropic's 32 MB request limit. */
export const MAX_REQUEST_IMAGE_BASE64 = 20 * 1024 * 1024;
/** Images per request when the caller does not say. */
export const DEFAULT_MAX_IMAGES_PER_REQUEST = 20;

/**
 * The user message that carries a round's images, after all its tool results (tool messages stay text for every
 * provider): per call with images, "Images from <tool> (call <id>):" and then its image references.
 * Undefined when no result has images.
 */
export function imagesMessage(calls: readonly ToolCall[], results: readonly ToolResult[]): UserMessage | undefined {
	const content: ContentPart[] = [];
	for (const [index, result] of results.entries()) {
		const call = calls[index];
		if (!call || !result.images || result.images.length === 0) continue;
		content.push({ type: "text", text: `Images from ${call.name} (call ${call.id}):` });
		for (const ref of result.images) content.push({ type: "image-ref", ref, marker: imageMarker(ref) });
	}
	return content.length > 0 ? { role: "user", content } : undefined;
}

export interface ResolveImagesOptions {
	/** False when the model cannot see images: every image becomes its marker. */
	vision: boolean;
	/** Only the newest this many images are sent; older ones become their marker. */
	maxImages: number;
	/**
	 * Reads a stored copy (undefined when it is gone). Default: the file system, through a per-process cache keyed by
	 * sha256 (a stored copy is read once; later requests only check that it is still on disk). A reader passed here
	 * is called for every image sent, uncached.
	 */
	readBytes?: (path: string) => Buffer | undefined;
}

type Loaded = { data: string } | { missing: "gone" | "changed" };

/**
 * The messages of one request with every image reference resolved: an `image-ref` part becomes an ImagePart (the
 * base64 of its stored copy) or a text part with its marker and why it was not sent — the model cannot see images;
 * the stored copy is gone or no longer matches its sha256; the image is older than the newest `maxImages` sent; the
 * request's 20 MB image budget is spent by newer images; or the copy is over the provider limit (5 MB base64 or
 * 8,000 px), so one bad file never poisons a session. Newest images win: parts are decided from the end backwards.
 * Messages without image references are returned as the same objects; the input is never modified.
 * Deterministic: the same messages and stored files give the same output. Never throws.
 */
export function resolveImages(messages: readonly Message[], options: ResolveImagesOptions): Message[] {
	const load = options.readBytes ? uncached(options.readBytes) : cachedLoad;
	const limit = Math.max(0, Math.floor(options.maxImages));
	let sent = 0;
	let budget = MAX_REQUEST_IMAGE_BASE64;
	const resolvePart = (part: ContentPart): ContentPart => {
		if (part.type === "text") return part;
		if (part.type === "image") {
			// an already inline image (not what the transcript stores, but it may meet one): same rules, no file
			const marker = `[image: ${part.mime}]`;
			if (!options.vision) return note(marker, "not sent — this model cannot see images");
			if (sent >= limit) return note(marker, `not sent — at most ${limit} images per request`);
			if (part.data.length > MAX_IMAGE_BASE64) return note(marker, "not sent — over the provider's image size limit");
			if (part.data.length > budget) return note(marker, "not sent — this request's image budget is used up");
			sent++;
			budget -= part.data.length;
			return part;
		}
		return resolveRef(part);
	};
	const resolveRef = (part: ImageRefPart): ContentPart => {
		const { ref, marker } = part;
		if (!options.vision) return note(marker, "not sent — this model cannot see images");
		if (sent >= limit) return note(marker, `not sent — at most ${limit} images per request`);
		if (Math.max(ref.width, ref.height) > MAX_IMAGE_EDGE) {
			return note(marker, `not sent — over the provider's limit of ${MAX_IMAGE_EDGE} px`);
		}
		const loaded = load(ref.path, ref.sha256);
		if ("missing" in loaded) {
			return loaded.missing === "gone"
				? { type: "text", text: `${marker} (no longer on disk)` }
				: note(marker, "not sent — the stored copy changed on disk");
		}
		if (loaded.data.length > MAX_IMAGE_BASE64) return note(marker, "not sent — over the provider's image size limit");
		if (loaded.data.length > budget) return note(marker, "not sent — this request's image budget is used up");
		sent++;
		budget -= loaded.data.length;
		const image: ImagePart = { type: "image", mime: ref.mime, data: loaded.data };
		return image;
	};

	const out: Message[] = [...messages];
	for (let index = out.length - 1; index >= 0; index--) {
		const message = out[index] as Message;
		if (message.role !== "user" || !message.content.some((part) => part.type !== "text")) continue;
		const content = [...message.content];
		for (let at = content.length - 1; at >= 0; at--) content[at] = resolvePart(content[at] as ContentPart);
		out[index] = { ...message, content };
	}
	return out;
}

function note(marker: string, why: string): ContentPart {
	return { type: "text", text: `${marker} (${why})` };
}

function uncached(readBytes: (path: string) => Buffer | undefined): (path: string, sha256: string) => Loaded {
	return (path, sha256) => {
		let bytes: Buffer | undefined;
		try {
			bytes = readBytes(path);
		} catch {
			bytes = undefined;
		}
		return verify(bytes, sha256);
	};
}

function verify(bytes: Buffer | undefined, sha256: string): Loaded {
	if (!bytes) return { missing: "gone" };
	if (createHash("sha256").update(bytes).digest("hex") !== sha256) return { missing: "changed" };
	return { data: bytes.toString("base64") };
}

/** Stored copies' base64 by sha256, oldest first (a Map keeps insertion order; a hit moves to the end). */
const cache = new Map<string, string>();
/** Base64 characters the cache may hold before it drops its least recently used entries. */
const CACHE_CHARACTERS = 64 * 1024 * 1024;
let cached = 0;

function cachedLoad(path: string, sha256: string): Loaded {
	const hit = cache.get(sha256);
	if (hit !== undefined) {
		if (!isFile(path)) return { missing: "gone" };
		cache.delete(sha256);
		cache.set(sha256, hit);
		return { data: hit };
	}
	let bytes: Buffer | undefined;
	try {
		bytes = readFileSync(path);
	} catch {
		bytes = undefined;
	}
	const loaded = verify(bytes, sha256);
	if ("data" in loaded) remember(sha256, loaded.data);
	return loaded;
}

function remember(sha256: string, data: string): void {
	if (data.length > CACHE_CHARACTERS) return;
	cache.set(sha256, data);
	cached += data.length;
	for (const [key, value] of cache) {
		if (cached <= CACHE_CHARACTERS) break;
		cache.delete(key);
		cached -= value.length;
	}
}

function isFile(path: string): boolean {
	try {
		return statSync(path).isFile();
	} catch {
		return false;
	}
}
