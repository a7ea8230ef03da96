import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanTerminalText, processToolResult, runProcess } from "./process.js";
import type { ToolContext } from "./tool.js";

const signal = () => new AbortController().signal;

function context(): ToolContext {
	const root = mkdtempSync(join(tmpdir(), "snowpea-process-"));
	return { cwd: root, home: root, sessionId: "s", callId: "c", signal: signal(), spillDir: join(root, "spill") };
}

describe("runProcess", () => {
	it("reports an executable that cannot start as data, not an exception", async () => {
		const outcome = await runProcess({
			file: "/nonexistent/program",
			args: [],
			cwd: tmpdir(),
			timeoutSeconds: 5,
			signal: signal(),
		});
		expect(outcome.spawnError).toContain("ENOENT");
		const result = await processToolResult(outcome, 5, context());
		expect(result).toMatchObject({ ok: false, errorCode: "spawn_failed" });
		expect(result.content).toMatch(/^\[failed to start: .*ENOENT.*\]$/);
	});

	it("does not start at all when the signal has already fired", async () => {
		const controller = new AbortController();
		controller.abort();
		const outcome = await runProcess({
			file: "/bin/bash",
			args: ["-c", "echo should-not-run"],
			cwd: tmpdir(),
			timeoutSeconds: 5,
			signal: controller.signal,
		});
		expect(outcome).toMatchObject({ aborted: true, stdout: "" });
	});

	it("keeps the start and the end of output too large to hold", async () => {
		const outcome = await runProcess({
			file: "/bin/bash",
			args: ["-c", "echo FIRST; head -c 20000000 /dev/zero | tr '\\0' a; echo; echo LAST"],
			cwd: tmpdir(),
			timeoutSeconds: 60,
			signal: signal(),
		});
		expect(outcome.exitCode).toBe(0);
		expect(outcome.stdout.startsWith("FIRST\n")).toBe(true);
		expect(outcome.stdout.endsWith("\nLAST\n")).toBe(true);
		expect(outcome.stdout).toMatch(/\[… \d+ bytes not kept: the output was too large to hold\]/);
		expect(outcome.stdout.length).toBeLessThan(12_000_000);
	});
});

describe("cleanTerminalText", () => {
	it("strips colours and keeps the final state of lines redrawn with carriage returns", () => {
		expect(cleanTerminalText("\u001b[32m 10%\r 50%\r100%\u001b[0m\ndone\r\n")).toBe("100%\ndone\n");
	});
});
