import { accessSync, constants } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { delimiter, join, resolve } from "node:path";
import { z } from "zod";
import { capOutput } from "./cap-output.js";
import { globToRegExp } from "./glob-pattern.js";
import { resolvePath, showPath } from "./paths.js";
import { runProcess } from "./process.js";
import { defineTool, failure, type Tool, type ToolContext, type ToolResult } from "./tool.js";
import { walkFiles } from "./walk.js";

/** Characters of a matching line shown; the rest is cut with a note. */
export const GREP_LINE_LIMIT = 500;
/** Files larger than this are not searched (ripgrep: --max-filesize 2M). */
const MAX_SEARCH_BYTES = 2 * 1024 * 1024;
/** Seconds ripgrep may run. */
const RIPGREP_TIMEOUT_SECONDS = 120;

export interface GrepMatch {
	/** Shown path: relative to cwd when inside it. */
	path: string;
	line: number;
	text: string;
}

/** Which search runs: ripgrep, the built-in walker, or ripgrep when it is on PATH (default). */
export type GrepEngine = "auto" | "ripgrep" | "builtin";

const parameters = z.object({
	pattern: z.string().min(1).describe("Regular expression to find in each line."),
	path: z.string().optional().describe("File or directory to search (default: the working directory)."),
	glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.py"; "!" excludes.'),
});

/** True when an executable `rg` is on PATH. */
export function ripgrepAvailable(): boolean {
	for (const directory of (process.env.PATH ?? "").split(delimiter)) {
		if (directory === "") continue;
		try {
			accessSync(join(directory, "rg"), constants.X_OK);
			return true;
		} catch {
			// not here
		}
	}
	return false;
}

/** A file filter from the tool's glob: without "/" it matches the file name, with "/" the path from the root. */
function fileFilter(glob: string | undefined): (relative: string) => boolean {
	if (glob === undefined || glob === "") return () => true;
	const exclude = glob.startsWith("!");
	const pattern = exclude ? glob.slice(1) : glob;
	const anchored = pattern.includes("/");
	const matcher = globToRegExp(anchored ? pattern.replace(/^\/+/, "") : pattern);
	return (relative) => {
		const subject = anchored ? relative : relative.slice(relative.lastIndexOf("/") + 1);
		return matcher.test(subject) !== exclude;
	};
}

/** Compiles the pattern as JavaScript understands it: Unicode-aware when it can be, else classic. */
function compilePattern(pattern: string): RegExp | string {
	try {
		return new RegExp(pattern, "u");
	} catch {
		try {
			return new RegExp(pattern);
		} catch (error) {
			return error instanceof Error ? error.message : String(error);
		}
	}
}

const withoutCarriageReturn = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);

/** Built-in search: JS RegExp over every text file under `root` (or `root` itself when it is a file). */
export async function searchBuiltin(
	root: string,
	pattern: string,
	glob: string | undefined,
	context: ToolContext,
): Promise<GrepMatch[] | string> {
	const regex = compilePattern(pattern);
	if (typeof regex === "string") return `invalid regular expression: ${regex}`;
	const info = await stat(root);
	const filter = fileFilter(glob);
	const files = info.isDirectory()
		? walkFiles(root, { signal: context.signal })
		: (async function* () {
				yield { absolute: root, relative: root.slice(root.lastIndexOf("/") + 1) };
			})();
	const matches: GrepMatch[] = [];
	for await (const file of files) {
		if (!filter(file.relative)) continue;
		const size = await stat(file.absolute).then(
			(found) => found.size,
			() => Number.POSITIVE_INFINITY,
		);
		if (size > MAX_SEARCH_BYTES) continue;
		const bytes = await readFile(file.absolute).catch(() => undefined);
		if (!bytes || bytes.includes(0)) continue;
		const lines = bytes.toString("utf8").split("\n");
		if (lines.at(-1) === "") lines.pop();
		const shown = showPath(context.cwd, file.absolute);
		lines.forEach((line, index) => {
			const text = withoutCarriageReturn(line);
			if (regex.test(text)) matches.push({ path: shown, line: index + 1, text });
		});
	}
	return matches;
}

/** ripgrep search, configured to see exactly the files the built-in search sees. */
export async function searchRipgrep(
	root: string,
	pattern: string,
	glob: string | undefined,
	context: ToolContext,
): Promise<GrepMatch[] | string> {
	const args = [
		"--no-config",
		"--no-heading",
		"--with-filename",
		"--line-number",
		"--null",
		// "$" matches before "\r\n" too, as in the built-in search, which drops a line's "\r" before matching.
		"--crlf",
		"--color=never",
		"--no-messages",
		"--hidden",
		"--no-ignore",
		"--no-follow",
		"--max-filesize=2M",
		"--glob=!.git",
		"--glob=!node_modules",
	];
	// Name globs are safe to hand to ripgrep (fewer files read); every glob is also applied below, so both agree.
	if (glob && !glob.includes("/")) args.push(`--glob=${glob}`);
	args.push("--regexp", pattern, "--", root);
	const outcome = await runProcess({
		file: "rg",
		args,
		cwd: context.cwd,
		timeoutSeconds: RIPGREP_TIMEOUT_SECONDS,
		signal: context.signal,
	});
	if (outcome.spawnError !== undefined) return `could not run rg: ${outcome.spawnError}`;
	if (outcome.timedOut) return `rg took longer than ${RIPGREP_TIMEOUT_SECONDS} s; narrow the path or the glob`;
	if (outcome.aborted) return "aborted";
	if (outcome.exitCode === 2 && outcome.stdout === "") {
		return outcome.stderr.trim() || "rg failed";
	}
	const info = await stat(root);
	const filter = fileFilter(glob);
	const matches: GrepMatch[] = [];
	for (const line of outcome.stdout.split("\n")) {
		const nul = line.indexOf("\0");
		if (nul === -1) continue;
		const colon = line.indexOf(":", nul);
		const number = Number(line.slice(nul + 1, colon));
		if (colon === -1 || !Number.isInteger(number)) continue;
		const absolute = resolve(context.cwd, line.slice(0, nul));
		const relative = info.isDirectory()
			? absolute.slice(root.length).replace(/^\/+/, "")
			: absolute.slice(absolute.lastIndexOf("/") + 1);
		if (!filter(relative)) continue;
		matches.push({
			path: showPath(context.cwd, absolute),
			line: number,
			text: withoutCarriageReturn(line.slice(colon + 1)),
		});
	}
	return matches;
}

/** `<path>:<line>:<text>` lines sorted by path then line, long lines cut at GREP_LINE_LIMIT characters. */
export function formatMatches(matches: GrepMatch[]): string {
	const sorted = [...matches].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
	return sorted
		.map((match) => {
			let text = match.text;
			if (text.length > GREP_LINE_LIMIT) {
				const code = text.charCodeAt(GREP_LINE_LIMIT - 1);
				const cut = code >= 0xd800 && code <= 0xdbff ? GREP_LINE_LIMIT - 1 : GREP_LINE_LIMIT;
				text = `${text.slice(0, cut)} [… ${text.length - cut} more characters]`;
			}
			return `${match.path}:${match.line}:${text}`;
		})
		.join("\n");
}

export interface GrepToolOptions {
	/** Default "auto": ripgrep when it is on PATH, else the built-in search. */
	engine?: GrepEngine;
}

/** Builds the grep tool; tests force an engine, everything else uses `grepTool`. */
export function createGrepTool(options: GrepToolOptions = {}): Tool {
	return defineTool({
		name: "grep",
		description: [
			"Search file contents with a regular expression. Answers `<path>:<line>:<text>` lines sorted by path and line;",
			`lines are cut at ${GREP_LINE_LIMIT} characters. Searches the working directory or \`path\` (a file or a`,
			"directory), optionally only files matching `glob`. Skips .git, node_modules, binary files and files over",
			"2 MB; hidden and git-ignored files are searched. Output over 30,000 bytes keeps the first and last lines and",
			"names a file holding all of it.",
		].join(" "),
		parameters,
		permission: "read",
		readOnly: true,
		async run(args, context): Promise<ToolResult> {
			const root = resolvePath(context.cwd, args.path ?? ".");
			const shownRoot = showPath(context.cwd, root);
			if (!(await stat(root).catch(() => undefined))) {
				return failure("not_found", `grep: ${shownRoot} does not exist`);
			}
			const engine = options.engine ?? "auto";
			const useRipgrep = engine === "ripgrep" || (engine === "auto" && ripgrepAvailable());
			const found = useRipgrep
				? await searchRipgrep(root, args.pattern, args.glob, context)
				: await searchBuiltin(root, args.pattern, args.glob, context);
			if (context.signal.aborted) return failure("aborted", "grep: aborted");
			if (typeof found === "string") return failure("search_failed", `grep: ${found}`);
			if (found.length === 0) {
				const where = args.path === undefined ? "" : ` in ${shownRoot}`;
				return {
					ok: true,
					content: `no matches for ${args.pattern}${where}`,
					display: "0 matches",
					details: { matches: 0, engine: useRipgrep ? "ripgrep" : "builtin" },
				};
			}
			const capped = await capOutput(formatMatches(found), context.spillDir);
			const files = new Set(found.map((match) => match.path)).size;
			return {
				ok: true,
				content: capped.text,
				display: `${found.length} ${found.length === 1 ? "match" : "matches"} in ${files} ${files === 1 ? "file" : "files"}`,
				details: {
					matches: found.length,
					files,
					spillPath: capped.spillPath,
					engine: useRipgrep ? "ripgrep" : "builtin",
				},
			};
		},
	});
}

/** grep: ripgrep when available, else the built-in search, with the same output either way. */
export const grepTool = createGrepTool();
