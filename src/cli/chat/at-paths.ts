import { open, realpath, stat } from "node:fs/promises";
import type { ContentPart } from "../../llm/types.js";
import { imageMarker, isSecretPath, storeImageFile } from "../../tools/attachments.js";
import { sniffImageType } from "../../tools/image-type.js";
import { resolvePath, showPath } from "../../tools/paths.js";

// @path references in a prompt: a text file is inlined with line numbers, an image is stored in the session's
// attachment store and travels as an image-ref part, and secrets are refused.

export interface AttachOptions {
	cwd: string;
	/** The session's attachment store (images are copied there). */
	attachmentDirectory: string;
	/** Bytes of one text file inlined before the rest is left out (default 100,000). */
	maxTextBytes?: number;
}

/** One attached file: the parts it adds to the prompt and a line for the person. */
export interface Attachment {
	parts: ContentPart[];
	/** e.g. "attached src/a.ts (42 lines)". */
	notice: string;
}

export interface ExpandedPrompt {
	/** The prompt's text (unchanged, references included), then each attachment's parts in order of appearance. */
	content: ContentPart[];
	/** One line per reference: what was attached, or why not. */
	notices: string[];
}

export const DEFAULT_MAX_TEXT_BYTES = 100_000;
const BINARY_PROBE_BYTES = 8192;
const TRAILING_PUNCTUATION = /[,.;:!?)\]}'"]+$/;

/**
 * The @path references in `text`: `@path` at the start or after whitespace, or `@"a path with spaces"`.
 * Returns the raw paths in order of appearance, each once.
 */
export function findAtPaths(text: string): string[] {
	const found: string[] = [];
	for (const match of text.matchAll(/(?:^|\s)@(?:"([^"]+)"|(\S+))/g)) {
		const path = match[1] ?? match[2];
		if (path && !found.includes(path)) found.push(path);
	}
	return found;
}

/**
 * Expands every @path reference of a prompt (see findAtPaths). A reference that names no file stays plain text
 * (trailing punctuation is tried without, so "see @a.ts." works). Never throws: every failure is a notice.
 */
export async function expandAtPaths(text: string, options: AttachOptions): Promise<ExpandedPrompt> {
	const content: ContentPart[] = [{ type: "text", text }];
	const notices: string[] = [];
	const seen = new Set<string>();
	for (const raw of findAtPaths(text)) {
		const path = await existingVariant(raw, options.cwd);
		if (path === undefined) {
			notices.push(`@${raw}: no such file; sent as plain text`);
			continue;
		}
		const absolute = resolvePath(options.cwd, path);
		if (seen.has(absolute)) continue;
		seen.add(absolute);
		const attached = await attachFile(path, options);
		if ("error" in attached) notices.push(attached.error);
		else {
			content.push(...attached.parts);
			notices.push(attached.notice);
		}
	}
	return { content, notices };
}

/**
 * Attaches one file (relative to `cwd`, or absolute, `~` for home): an image as an image-ref part (copied into the
 * attachment store), anything else as its text with numbered lines ("     1\t…", as read_file shows them).
 * Refuses secrets (.env*, private keys, anything under .ssh — also when a link leads there), directories, binary files.
 * Never throws.
 */
export async function attachFile(path: string, options: AttachOptions): Promise<Attachment | { error: string }> {
	const absolute = resolvePath(options.cwd, path);
	const shown = showPath(options.cwd, absolute);
	const real = await realpath(absolute).catch(() => absolute);
	if (isSecretPath(path) || isSecretPath(absolute) || isSecretPath(real)) {
		return {
			error: `refused @${path}: it may hold secrets (.env files, private keys and .ssh are never attached)`,
		};
	}
	const info = await stat(absolute).catch(() => undefined);
	if (!info) return { error: `@${path}: no such file` };
	if (info.isDirectory()) return { error: `@${path} is a directory; attach files one by one` };
	if (!info.isFile()) return { error: `@${path} is not a regular file` };
	let head: Buffer;
	try {
		head = await readStart(absolute, BINARY_PROBE_BYTES);
	} catch (error) {
		return { error: `@${path} could not be read: ${reasonOf(error)}` };
	}
	if (sniffImageType(head)) {
		const stored = await storeImageFile(absolute, { directory: options.attachmentDirectory, shownAs: shown });
		if ("error" in stored) return { error: `@${path}: ${stored.error}` };
		return {
			parts: [{ type: "image-ref", ref: stored, marker: imageMarker(stored) }],
			notice: `attached image ${shown} (${stored.width}×${stored.height})`,
		};
	}
	if (head.includes(0)) return { error: `@${path} is a binary file; only text files and images can be attached` };
	const maxBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
	let bytes: Buffer;
	try {
		bytes = await readStart(absolute, maxBytes + 1);
	} catch (error) {
		return { error: `@${path} could not be read: ${reasonOf(error)}` };
	}
	const cut = bytes.length > maxBytes;
	let text = bytes.subarray(0, maxBytes).toString("utf8");
	if (cut) text = text.slice(0, text.lastIndexOf("\n") + 1 || text.length);
	const lines = text === "" ? [] : (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
	const numbered = lines.map((line, index) => `${String(index + 1).padStart(6)}\t${line.replace(/\r$/, "")}`);
	const tail = cut
		? `\n[… the file is ${info.size} bytes; only its first ${lines.length} lines are shown — read_file ${shown} with offset ${lines.length + 1} for the rest]`
		: "";
	const body = lines.length === 0 ? "(empty file)" : numbered.join("\n");
	return {
		parts: [{ type: "text", text: `Contents of ${shown}:\n${body}${tail}` }],
		notice: `attached ${shown} (${lines.length} line${lines.length === 1 ? "" : "s"}${cut ? ", cut" : ""})`,
	};
}

/** `raw` if it names something, else `raw` without trailing punctuation if that does; else undefined. */
async function existingVariant(raw: string, cwd: string): Promise<string | undefined> {
	for (const candidate of [raw, raw.replace(TRAILING_PUNCTUATION, "")]) {
		if (candidate === "") continue;
		// a secret is refused by attachFile, whether it exists or not
		if (isSecretPath(candidate)) return candidate;
		if (await stat(resolvePath(cwd, candidate)).catch(() => undefined)) return candidate;
	}
	return undefined;
}

async function readStart(path: string, bytes: number): Promise<Buffer> {
	const handle = await open(path, "r");
	try {
		const buffer = Buffer.alloc(bytes);
		const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
		return buffer.subarray(0, bytesRead);
	} finally {
		await handle.close();
	}
}

function reasonOf(error: unknown): string {
	return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}
