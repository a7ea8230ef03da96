import { readFile, stat, writeFile } from "node:fs/promises";
import { z } from "zod";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure } from "./tool.js";

const parameters = z.object({
	path: z.string().min(1).describe("File to edit, relative to the working directory or absolute."),
	old_string: z.string().describe("Exact text to replace, including whitespace and indentation (no line numbers)."),
	new_string: z.string().describe("Text to put in its place."),
	replace_all: z.boolean().optional().describe("Replace every occurrence (default false: old_string must be unique)."),
});

/** Non-overlapping occurrences of `needle` (non-empty) in `haystack`. */
export function countOccurrences(haystack: string, needle: string): number {
	let count = 0;
	for (let index = haystack.indexOf(needle); index !== -1; index = haystack.indexOf(needle, index + needle.length)) {
		count++;
	}
	return count;
}

/** edit_file: exact search and replace inside one file. */
export const editFileTool = defineTool({
	name: "edit_file",
	description: [
		"Replace exact text in a file: old_string must match the file character for character (read_file it first;",
		"leave out the line numbers) and must occur once, unless replace_all is true. Include a few lines of context",
		"to make it unique. To create a file use write_file.",
	].join(" "),
	parameters,
	permission: "write",
	readOnly: false,
	async run(args, context) {
		const absolute = resolvePath(context.cwd, args.path);
		const shown = showPath(context.cwd, absolute);
		if (args.old_string === args.new_string) {
			return failure("no_change", `edit_file: old_string and new_string are identical; nothing to change in ${shown}`);
		}
		if (args.old_string === "") {
			return failure(
				"empty_old_string",
				`edit_file: old_string is empty; to create or rewrite ${shown} use write_file`,
			);
		}
		const info = await stat(absolute).catch(() => undefined);
		if (!info) return failure("not_found", `edit_file: ${shown} does not exist; to create it use write_file`);
		if (!info.isFile()) return failure("not_a_file", `edit_file: ${shown} is not a regular file`);
		const original = await readFile(absolute, "utf8");
		let oldString = args.old_string;
		let newString = args.new_string;
		let count = countOccurrences(original, oldString);
		// read_file shows CRLF files without their "\r": match such a file with the model's "\n" line breaks too.
		if (count === 0 && original.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r")) {
			oldString = oldString.replace(/\n/g, "\r\n");
			newString = newString.replace(/\r?\n/g, "\r\n");
			count = countOccurrences(original, oldString);
		}
		if (count === 0) {
			return failure(
				"not_found",
				`edit_file: old_string not found in ${shown}; read_file it to see the current text (whitespace and indentation must match exactly)`,
			);
		}
		if (count > 1 && !args.replace_all) {
			return failure(
				"ambiguous",
				`edit_file: old_string occurs ${count} times in ${shown}; add surrounding lines to make it unique, or set replace_all to true`,
			);
		}
		const updated = args.replace_all
			? original.split(oldString).join(newString)
			: (() => {
					const index = original.indexOf(oldString);
					return original.slice(0, index) + newString + original.slice(index + oldString.length);
				})();
		await writeFile(absolute, updated, "utf8");
		return {
			ok: true,
			content: `edited ${shown}: replaced ${count} ${count === 1 ? "occurrence" : "occurrences"}`,
			details: { path: absolute },
		};
	},
});
