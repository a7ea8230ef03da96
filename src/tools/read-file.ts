import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { sniffImageType } from "./image-type.js";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure } from "./tool.js";

/** Lines shown when no limit is given. */
export const DEFAULT_LINE_LIMIT = 2000;
/** Characters of one line shown in a normal read; the rest is reachable with char_offset. */
export const LINE_CHARACTER_LIMIT = 2000;
/** Characters of one line shown per char_offset page. */
export const CHARACTER_PAGE = 20_000;
/** Whole answer, in characters. */
export const OUTPUT_CHARACTER_LIMIT = 60_000;
/** Files larger than this are not loaded; shell tools (head, sed, grep) can still look into them. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** How much of the start is checked for a NUL byte to call a file binary. */
const BINARY_PROBE_BYTES = 8192;

const parameters = z.object({
	path: z.string().min(1).describe("File to read, relative to the working directory or absolute."),
	offset: z.number().int().min(1).optional().describe("First line to show, 1-based (default 1)."),
	limit: z.number().int().min(1).optional().describe(`How many lines to show (default ${DEFAULT_LINE_LIMIT}).`),
	char_offset: z
		.number()
		.int()
		.min(0)
		.optional()
		.describe(`Page through the single line \`offset\`, ${CHARACTER_PAGE} characters from this character on.`),
});

const numbered = (lineNumber: number, text: string) => `${String(lineNumber).padStart(6)}\t${text}`;

/** Moves `index` back by one when it would split a surrogate pair. */
function safeIndex(text: string, index: number): number {
	if (index <= 0 || index >= text.length) return Math.max(0, Math.min(index, text.length));
	const code = text.charCodeAt(index);
	const previous = text.charCodeAt(index - 1);
	return code >= 0xdc00 && code <= 0xdfff && previous >= 0xd800 && previous <= 0xdbff ? index - 1 : index;
}

/** read_file: numbered lines of a text file, paged by lines and, for huge lines, by characters. */
export const readFileTool = defineTool({
	name: "read_file",
	description: [
		'Read a text file as numbered lines ("<line number>\\t<text>"). Shows up to 2,000 lines from `offset`',
		"(1-based) unless `limit` says otherwise, and at most 60,000 characters in all; the answer says how to continue.",
		"Lines longer than 2,000 characters are cut; read the rest with `offset` = that line and `char_offset` (20,000",
		"characters per call). Images and binary files are refused. The line numbers are not part of the file: leave",
		"them out of edit_file's old_string.",
	].join(" "),
	parameters,
	permission: "read",
	readOnly: true,
	async run(args, context) {
		const absolute = resolvePath(context.cwd, args.path);
		const shown = showPath(context.cwd, absolute);
		const info = await stat(absolute).catch(() => undefined);
		if (!info) return failure("not_found", `read_file: ${shown} does not exist; check the path (glob or list_dir)`);
		if (info.isDirectory()) return failure("is_directory", `read_file: ${shown} is a directory; use list_dir`);
		if (!info.isFile()) return failure("not_a_file", `read_file: ${shown} is not a regular file`);
		if (info.size > MAX_FILE_BYTES) {
			return failure(
				"too_large",
				`read_file: ${shown} is ${Math.round(info.size / 1024 / 1024)} MB, too large to read; use grep or shell (head, sed -n)`,
			);
		}
		const bytes = await readFile(absolute);
		const image = sniffImageType(bytes);
		if (image) {
			const kilobytes = Math.max(1, Math.round(bytes.length / 1024));
			return failure("is_image", `${shown} is an image (${image}, ${kilobytes} KB); use view_image to see it`);
		}
		if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) {
			return failure(
				"binary",
				`read_file: ${shown} is a binary file (${bytes.length} bytes); read_file shows text only (try shell: xxd, file)`,
			);
		}
		const details = {
			path: absolute,
			lines: 0,
			sha256: createHash("sha256").update(bytes).digest("hex"),
		};
		const text = bytes.toString("utf8");
		const lines = text === "" ? [] : (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
		details.lines = lines.length;
		const total = lines.length;
		if (total === 0) return { ok: true, content: `${shown} is empty (0 lines)`, display: `${shown}: empty`, details };

		const offset = args.offset ?? 1;
		if (offset > total) {
			return {
				...failure("offset_past_end", `read_file: offset ${offset} is past the end: ${shown} has ${total} lines`),
				details,
			};
		}
		const lineText = (index: number) => {
			const line = lines[index]!;
			return line.endsWith("\r") ? line.slice(0, -1) : line;
		};

		if (args.char_offset !== undefined) {
			const line = lineText(offset - 1);
			if (args.char_offset >= line.length && !(line.length === 0 && args.char_offset === 0)) {
				return {
					...failure(
						"offset_past_end",
						`read_file: char_offset ${args.char_offset} is past the end of line ${offset}, which has ${line.length} characters`,
					),
					details,
				};
			}
			const start = safeIndex(line, args.char_offset);
			const end = safeIndex(line, start + CHARACTER_PAGE);
			const next =
				end < line.length
					? `continue with offset=${offset}, char_offset=${end}`
					: offset < total
						? `end of line; the next line is offset=${offset + 1}`
						: "end of line and of the file";
			return {
				ok: true,
				content: `${numbered(offset, line.slice(start, end))}\n[line ${offset}: characters ${start}–${end} of ${line.length}; ${next}]`,
				display: `${shown}: line ${offset}, characters ${start}–${end} of ${line.length}`,
				details,
			};
		}

		const last = Math.min(total, offset - 1 + (args.limit ?? DEFAULT_LINE_LIMIT));
		// Room left for the closing note, so the whole answer stays within the limit.
		const budget = OUTPUT_CHARACTER_LIMIT - 200;
		const out: string[] = [];
		let used = 0;
		let shownLast = offset - 1;
		for (let lineNumber = offset; lineNumber <= last; lineNumber++) {
			let line = lineText(lineNumber - 1);
			if (line.length > LINE_CHARACTER_LIMIT) {
				const cut = safeIndex(line, LINE_CHARACTER_LIMIT);
				line = `${line.slice(0, cut)} [… line cut at ${cut} of ${line.length} characters; read the rest with offset=${lineNumber}, char_offset=${cut}]`;
			}
			const entry = numbered(lineNumber, line);
			if (used + entry.length + 1 > budget && out.length > 0) break;
			out.push(entry);
			used += entry.length + 1;
			shownLast = lineNumber;
		}
		if (shownLast < total) {
			out.push(`[showing lines ${offset}–${shownLast} of ${total}; continue with offset=${shownLast + 1}]`);
		}
		return {
			ok: true,
			content: out.join("\n"),
			display: `${shown}: lines ${offset}–${shownLast} of ${total}`,
			details,
		};
	},
});
