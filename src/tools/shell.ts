import { stat } from "node:fs/promises";
import { z } from "zod";
import { resolvePath, showPath } from "./paths.js";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, processToolResult, runProcess } from "./process.js";
import { defineTool, failure } from "./tool.js";

/** Environment for commands: no pagers and no credential prompts, since nobody can type into them. */
export const COMMAND_ENVIRONMENT: Record<string, string> = { PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" };

const parameters = z.object({
	command: z.string().min(1).describe("The command line, run by /bin/bash -c."),
	cwd: z.string().optional().describe("Directory to run in, relative to the working directory (default: it)."),
	timeout: z
		.number()
		.positive()
		.max(MAX_TIMEOUT_SECONDS)
		.optional()
		.describe(`Seconds before the command is killed (default ${DEFAULT_TIMEOUT_SECONDS}, max ${MAX_TIMEOUT_SECONDS}).`),
});

/** shell: runs a bash command line in a new process group and answers with its output and exit status. */
export const shellTool = defineTool({
	name: "shell",
	description: [
		"Run a command with /bin/bash -c in the working directory (or `cwd`). Returns stdout, then [stderr] and stderr,",
		"then [exit N]. Each call is a fresh shell: cd and exports do not carry over. Stdin is closed, so nothing can",
		"answer prompts: pass --yes/-y or similar flags. Killed after `timeout` seconds (default 120, max 3600) together",
		"with every process it started. Colours are stripped. Output over 30,000 bytes keeps the first and last lines",
		"and names a file holding all of it. To run a server, start it in the background with its output redirected to",
		"a file. Prefer read_file, grep, glob and edit_file for reading and changing files.",
	].join(" "),
	parameters,
	permission: "exec",
	readOnly: false,
	async run(args, context) {
		const directory = resolvePath(context.cwd, args.cwd ?? ".");
		const info = await stat(directory).catch(() => undefined);
		if (!info?.isDirectory()) {
			return failure(
				"not_found",
				`shell: cwd ${showPath(context.cwd, directory)} ${info ? "is not a directory" : "does not exist"}`,
			);
		}
		const timeoutSeconds = args.timeout ?? DEFAULT_TIMEOUT_SECONDS;
		const outcome = await runProcess({
			file: "/bin/bash",
			args: ["-c", args.command],
			cwd: directory,
			timeoutSeconds,
			signal: context.signal,
			env: COMMAND_ENVIRONMENT,
		});
		return processToolResult(outcome, timeoutSeconds, context);
	},
});
