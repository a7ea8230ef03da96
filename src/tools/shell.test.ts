import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shellTool } from "./shell.js";
import type { ToolContext } from "./tool.js";

function setup(signal: AbortSignal = new AbortController().signal): { root: string; context: ToolContext } {
	const root = mkdtempSync(join(tmpdir(), "snowpea-shell-"));
	const context: ToolContext = {
		cwd: root,
		home: join(root, "home"),
		sessionId: "s",
		callId: "c",
		signal,
		spillDir: join(root, "spill"),
	};
	return { root, context };
}

const shell = (context: ToolContext, args: Record<string, unknown>) => shellTool.execute(JSON.stringify(args), context);

/** True while `pid` is a live process (a zombie waiting to be reaped counts as gone). */
function isRunning(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return false;
	}
}

/** Waits (bounded) until `path` exists. */
async function waitForFile(path: string): Promise<void> {
	for (let attempt = 0; attempt < 1000 && !existsSync(path); attempt++) {
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

describe("shell", () => {
	it("answers stdout then the exit status", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "echo hello; echo world" });
		expect(result).toMatchObject({ ok: true, content: "hello\nworld\n[exit 0]" });
		expect(result.details).toMatchObject({ exitCode: 0, timedOut: false });
	});

	it("adds a [stderr] section and fails on a non-zero exit", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "echo out; echo err >&2; exit 3" });
		expect(result.ok).toBe(false);
		expect(result.content).toBe("out\n[stderr]\nerr\n[exit 3]");
		expect(result.details).toMatchObject({ exitCode: 3 });
	});

	it("leaves out the stderr section when stderr is empty and ends a last line without a break", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "printf 'no newline'" });
		expect(result.content).toBe("no newline\n[exit 0]");
	});

	it("strips ANSI colours", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "printf '\\033[1;31mred\\033[0m plain\\n'" });
		expect(result.content).toBe("red plain\n[exit 0]");
	});

	it("closes stdin, so a command reading it ends at once", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "cat; echo done" });
		expect(result.content).toBe("done\n[exit 0]");
	});

	it("runs in cwd resolved against the working directory", async () => {
		const { root, context } = setup();
		mkdirSync(join(root, "sub"));
		const result = await shell(context, { command: "pwd", cwd: "sub" });
		expect(result.content).toBe(`${join(root, "sub")}\n[exit 0]`);
		const missing = await shell(context, { command: "pwd", cwd: "nope" });
		expect(missing).toMatchObject({ ok: false, errorCode: "not_found" });
	});

	it("kills the whole process group on timeout", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "sleep 300 & echo $!; wait", timeout: 1 });
		expect(result.ok).toBe(false);
		expect(result.errorCode).toBe("timeout");
		expect(result.content).toMatch(/^\d+\n\[killed: timeout after 1 s\]$/);
		expect(result.details).toMatchObject({ timedOut: true, exitCode: null });
		const sleepPid = Number(result.content.split("\n")[0]);
		expect(isRunning(sleepPid)).toBe(false);
	});

	it("follows SIGTERM with SIGKILL for processes that ignore it", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "trap '' TERM; sleep 300 & echo $!; wait", timeout: 1 });
		expect(result.content).toContain("[killed: timeout after 1 s]");
		expect(isRunning(Number(result.content.split("\n")[0]))).toBe(false);
	});

	it("kills the process group when the signal aborts", async () => {
		const controller = new AbortController();
		const { root, context } = setup(controller.signal);
		const started = join(root, "started");
		const running = shell(context, { command: `sleep 300 & echo $!; touch ${started}; wait` });
		await waitForFile(started);
		controller.abort();
		const result = await running;
		expect(result).toMatchObject({ ok: false, errorCode: "aborted" });
		expect(result.content).toMatch(/\[killed: aborted\]$/);
		expect(isRunning(Number(result.content.split("\n")[0]))).toBe(false);
	});

	it("does not wait for a background job that keeps the output open", async () => {
		const { context } = setup();
		const result = await shell(context, { command: "sleep 60 & echo $!", timeout: 120 });
		const pid = Number(result.content.split("\n")[0]);
		expect(result.content).toContain("background processes still hold the output open");
		expect(result.content).toMatch(/\[exit 0\]$/);
		process.kill(pid, "SIGKILL");
	});

	it("caps long output with head and tail lines and spills the full text", async () => {
		const { root, context } = setup();
		const result = await shell(context, { command: "seq 1 20000" });
		expect(result.ok).toBe(true);
		const lines = result.content.split("\n");
		expect(lines.slice(0, 3)).toEqual(["1", "2", "3"]);
		expect(lines.slice(-3)).toEqual(["19999", "20000", "[exit 0]"]);
		const marker = lines.find((line) => line.startsWith("[… "));
		expect(marker).toMatch(
			/^\[… \d+ lines \(\d+ bytes\) omitted — full output in .+; read_file it to see everything\]$/,
		);
		expect(Buffer.byteLength(result.content)).toBeLessThan(30_000 + marker!.length + 20);
		const spillPath = result.details?.spillPath as string;
		expect(marker).toContain(spillPath);
		expect(spillPath.startsWith(join(root, "spill"))).toBe(true);
		const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("");
		expect(readFileSync(spillPath, "utf8")).toBe(`${full}[exit 0]`);
		expect(statSync(spillPath).mode & 0o777).toBe(0o600);
		expect(statSync(join(root, "spill")).mode & 0o777).toBe(0o700);
		expect(result.details?.bytes).toBe(Buffer.byteLength(`${full}[exit 0]`));
	});

	it("turns bad arguments into invalid_arguments results", async () => {
		const { context } = setup();
		expect(await shellTool.execute("{", context)).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		expect(await shell(context, { command: 42 })).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		const tooLong = await shell(context, { command: "true", timeout: 5000 });
		expect(tooLong).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
		expect(tooLong.content).toContain("timeout");
	});

	it("is an exec tool with a timeout limit in its schema", () => {
		expect(shellTool.permission).toBe("exec");
		expect(shellTool.readOnly).toBe(false);
		const properties = shellTool.definition.parameters.properties as Record<string, Record<string, unknown>>;
		expect(properties.timeout?.maximum).toBe(3600);
	});
});
