import { stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { expandBraces, globToRegExp, hasMagic, normalizePattern } from "./glob-pattern.js";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure } from "./tool.js";
import { walkFiles } from "./walk.js";

/** Most paths one answer lists. */
export const GLOB_RESULT_LIMIT = 1000;

const parameters = z.object({
	pattern: z.string().min(1).describe('Glob such as "**/*.ts", "src/*.{js,ts}", "test_?.py", "[A-Z]*.md".'),
	path: z.string().optional().describe("Directory the pattern is relative to (default: the working directory)."),
});

/** Splits a pattern into the literal directory it starts with and the rest, so the walk can start there. */
function splitBase(pattern: string): { base: string; rest: string } {
	const segments = pattern.split("/");
	let literal = 0;
	while (literal < segments.length - 1 && !hasMagic(segments[literal]!)) literal++;
	return { base: segments.slice(0, literal).join("/"), rest: segments.slice(literal).join("/") };
}

/** The files under `root` whose path relative to it matches `pattern`, sorted. Never throws for a missing root. */
export async function globFiles(root: string, pattern: string, signal?: AbortSignal): Promise<string[]> {
	const normalized = normalizePattern(pattern);
	let start = root;
	let rest = normalized;
	if (isAbsolute(normalized)) {
		start = "/";
		rest = normalized.slice(1);
	}
	const split = splitBase(rest);
	start = join(start, split.base);
	const matcher = globToRegExp(split.rest);
	const unbounded = expandBraces(split.rest).some((alternative) => alternative.split("/").includes("**"));
	const maxDepth = unbounded
		? undefined
		: Math.max(...expandBraces(split.rest).map((alternative) => alternative.split("/").length));
	const found: string[] = [];
	for await (const file of walkFiles(start, { signal, fileLinks: true, maxDepth })) {
		if (matcher.test(file.relative)) found.push(file.absolute);
	}
	return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** glob: finds files by name pattern. */
export const globTool = defineTool({
	name: "glob",
	description: [
		"Find files by path pattern: * (within one folder), ** (any folders), ?, {a,b}, [a-z]. Lists matching files",
		"(not directories), sorted, relative to the working directory, at most 1,000. Skips .git and",
		"node_modules; includes hidden files. Use grep to search inside files.",
	].join(" "),
	parameters,
	permission: "read",
	readOnly: true,
	async run(args, context) {
		const root = resolvePath(context.cwd, args.path ?? ".");
		const info = await stat(root).catch(() => undefined);
		if (!info?.isDirectory()) {
			return failure(
				"not_found",
				`glob: ${showPath(context.cwd, root)} ${info ? "is not a directory" : "does not exist"}`,
			);
		}
		const matches = (await globFiles(root, args.pattern, context.signal)).map((path) => showPath(context.cwd, path));
		if (matches.length === 0) {
			return { ok: true, content: `no files match ${args.pattern}`, display: "0 files", details: { count: 0 } };
		}
		const shown = matches.slice(0, GLOB_RESULT_LIMIT);
		const note =
			matches.length > GLOB_RESULT_LIMIT
				? `\n[showing the first ${GLOB_RESULT_LIMIT} of ${matches.length} files; narrow the pattern or the path]`
				: "";
		return {
			ok: true,
			content: `${shown.join("\n")}${note}`,
			display: `${matches.length} ${matches.length === 1 ? "file" : "files"}`,
			details: { count: matches.length },
		};
	},
});
