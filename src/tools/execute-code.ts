import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, processToolResult, runProcess } from "./process.js";
import { COMMAND_ENVIRONMENT } from "./shell.js";
import { defineTool } from "./tool.js";

const parameters = z.object({
	code: z.string().min(1).describe("Python source to run as a script."),
	timeout: z
		.number()
		.positive()
		.max(MAX_TIMEOUT_SECONDS)
		.optional()
		.describe(`Seconds before the run is killed (default ${DEFAULT_TIMEOUT_SECONDS}, max ${MAX_TIMEOUT_SECONDS}).`),
});

/** The interpreter for `cwd`: the project's `.venv/bin/python` when present, else `python3` from PATH. */
export function pythonFor(cwd: string): string {
	const local = join(cwd, ".venv", "bin", "python");
	return existsSync(local) ? local : "python3";
}

/** The private scratch directory `<cwd>/.snowpea/tmp`, created (or reset) with mode 0700. */
async function scratchDirectory(cwd: string): Promise<string> {
	const directory = join(cwd, ".snowpea", "tmp");
	await mkdir(directory, { recursive: true, mode: 0o700 });
	if (((await stat(directory)).mode & 0o777) !== 0o700) await chmod(directory, 0o700);
	return directory;
}

/** execute_code: runs a Python script from a temporary file that is always deleted afterwards. */
export const executeCodeTool = defineTool({
	name: "execute_code",
	description: [
		"Run Python code as a script in the working directory, with the project's .venv/bin/python if it exists, else",
		"python3. Print what you want to see. Returns stdout, then [stderr] and stderr, then [exit N]. Stdin is closed.",
		"Killed after `timeout` seconds (default 120, max 3600). Output over 30,000 bytes keeps the first and last lines",
		"and names a file holding all of it. Nothing persists between calls.",
	].join(" "),
	parameters,
	permission: "exec",
	readOnly: false,
	async run(args, context) {
		const timeoutSeconds = args.timeout ?? DEFAULT_TIMEOUT_SECONDS;
		const script = join(await scratchDirectory(context.cwd), `code-${randomBytes(8).toString("hex")}.py`);
		try {
			await writeFile(script, args.code, { encoding: "utf8", mode: 0o600, flag: "wx" });
			const outcome = await runProcess({
				file: pythonFor(context.cwd),
				args: [script],
				cwd: context.cwd,
				timeoutSeconds,
				signal: context.signal,
				env: COMMAND_ENVIRONMENT,
			});
			return await processToolResult(outcome, timeoutSeconds, context);
		} finally {
			await rm(script, { force: true });
		}
	},
});
