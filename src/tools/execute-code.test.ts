import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toolTestContext } from "../../test/support/tool-context.js";
import { executeCodeTool } from "./execute-code.js";
import type { ToolContext } from "./tool.js";

const setup = () => toolTestContext("snowpea-code-");

const run = (context: ToolContext, args: Record<string, unknown>) =>
	executeCodeTool.execute(JSON.stringify(args), context);

const scratch = (root: string) => join(root, ".snowpea", "tmp");

describe("execute_code", () => {
	it("runs Python in the working directory and answers like shell", async () => {
		const { root, context } = setup();
		const result = await run(context, {
			code: "import os, sys\nprint(os.getcwd())\nprint('warn', file=sys.stderr)\nsys.exit(2)",
		});
		expect(result.content).toBe(`${root}\n[stderr]\nwarn\n[exit 2]`);
		expect(result).toMatchObject({ ok: false, errorCode: "exit_nonzero" });
	});

	it("deletes its temporary file and keeps the scratch directory private", async () => {
		const { root, context } = setup();
		const result = await run(context, { code: "print(__file__)" });
		expect(result.ok).toBe(true);
		const script = result.content.split("\n")[0]!;
		expect(script.startsWith(scratch(root))).toBe(true);
		expect(existsSync(script)).toBe(false);
		expect(readdirSync(scratch(root))).toEqual([]);
		expect(statSync(scratch(root)).mode & 0o777).toBe(0o700);
	});

	it("deletes its temporary file after a timeout too", async () => {
		const { root, context } = setup();
		const result = await run(context, {
			code: "import time\nprint(__file__, flush=True)\ntime.sleep(300)",
			timeout: 1,
		});
		expect(result.errorCode).toBe("timeout");
		expect(result.content).toMatch(/\[killed: timeout after 1 s\]$/);
		expect(readdirSync(scratch(root))).toEqual([]);
	});

	it("prefers the project's .venv/bin/python", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, ".venv", "bin"), { recursive: true });
		const fake = join(root, ".venv", "bin", "python");
		writeFileSync(fake, '#!/bin/sh\necho "venv python ran $(basename "$1")"\n');
		chmodSync(fake, 0o755);
		const result = await run(context, { code: "print('real')" });
		expect(result.content).toMatch(/^venv python ran code-[0-9a-f]+\.py\n\[exit 0\]$/);
	});

	it("rejects a timeout above 3,600 seconds", async () => {
		const { context } = setup();
		const result = await run(context, { code: "print(1)", timeout: 5000 });
		expect(result).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});

	it("is an exec tool", () => {
		expect(executeCodeTool.permission).toBe("exec");
		expect(executeCodeTool.readOnly).toBe(false);
	});
});
