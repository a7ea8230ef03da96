import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { utf8Bytes } from "../llm/text.js";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure } from "./tool.js";

const parameters = z.object({
	path: z.string().min(1).describe("File to write, relative to the working directory or absolute."),
	content: z.string().describe("The complete new content of the file."),
});

/** Lines in `text`: "" has 0, and a final line without a line break still counts. */
export function countLines(text: string): number {
	if (text === "") return 0;
	const breaks = text.split("\n").length - 1;
	return text.endsWith("\n") ? breaks : breaks + 1;
}

/** write_file: creates or replaces a whole file, creating its parent directories. */
export const writeFileTool = defineTool({
	name: "write_file",
	description: [
		"Create a file or replace its whole content; parent directories are created. For changing part of an existing",
		"file use edit_file instead: it is cheaper and cannot drop unrelated lines.",
	].join(" "),
	parameters,
	permission: "write",
	readOnly: false,
	async run(args, context) {
		const absolute = resolvePath(context.cwd, args.path);
		const shown = showPath(context.cwd, absolute);
		const info = await stat(absolute).catch(() => undefined);
		if (info?.isDirectory()) return failure("is_directory", `write_file: ${shown} is a directory`);
		await mkdir(dirname(absolute), { recursive: true });
		await writeFile(absolute, args.content, "utf8");
		const bytes = utf8Bytes(args.content);
		const lines = countLines(args.content);
		return {
			ok: true,
			content: `wrote ${bytes} bytes (${lines} ${lines === 1 ? "line" : "lines"}) to ${shown}`,
			details: { path: absolute },
		};
	},
});
