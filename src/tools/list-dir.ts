import type { Dirent } from "node:fs";
import { readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure } from "./tool.js";

/** Most entries one answer lists. */
export const LIST_DIR_LIMIT = 500;

const parameters = z.object({
	path: z.string().optional().describe("Directory to list (default: the working directory)."),
});

/** A size for people: "812 B", "4.2 KB", "17.0 MB". */
export function formatSize(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	const units = ["KB", "MB", "GB", "TB"];
	let value = bytes / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return `${value.toFixed(1)} ${units[unit]}`;
}

async function describe(directory: string, entry: Dirent): Promise<string> {
	const path = join(directory, entry.name);
	if (entry.isDirectory()) return `${entry.name}/`;
	if (entry.isSymbolicLink()) {
		const target = await readlink(path).catch(() => "?");
		const info = await stat(path).catch(() => undefined);
		return `${entry.name}${info?.isDirectory() ? "/" : ""} -> ${target}`;
	}
	if (entry.isFile()) {
		const info = await stat(path).catch(() => undefined);
		return info ? `${entry.name}\t${formatSize(info.size)}` : entry.name;
	}
	return `${entry.name}\t(special file)`;
}

/** list_dir: one directory's entries, not recursive. */
export const listDirTool = defineTool({
	name: "list_dir",
	description: [
		"List one directory (not recursive): entries sorted by name, directories with a trailing /, files with their",
		`size, links as name -> target. At most ${LIST_DIR_LIMIT} entries. Use glob to find files in a whole tree.`,
	].join(" "),
	parameters,
	permission: "read",
	readOnly: true,
	async run(args, context) {
		const directory = resolvePath(context.cwd, args.path ?? ".");
		const shown = showPath(context.cwd, directory);
		const info = await stat(directory).catch(() => undefined);
		if (!info) return failure("not_found", `list_dir: ${shown} does not exist`);
		if (!info.isDirectory()) return failure("not_a_directory", `list_dir: ${shown} is not a directory; use read_file`);
		const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) =>
			a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
		);
		if (entries.length === 0) return { ok: true, content: `${shown} is empty`, display: "0 entries" };
		const lines = await Promise.all(entries.slice(0, LIST_DIR_LIMIT).map((entry) => describe(directory, entry)));
		if (entries.length > LIST_DIR_LIMIT) {
			lines.push(`[showing the first ${LIST_DIR_LIMIT} of ${entries.length} entries; use glob to narrow down]`);
		}
		return {
			ok: true,
			content: lines.join("\n"),
			display: `${entries.length} ${entries.length === 1 ? "entry" : "entries"}`,
			details: { entries: entries.length },
		};
	},
});
