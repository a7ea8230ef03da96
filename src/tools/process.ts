import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { stripAnsi, utf8Bytes } from "../llm/text.js";
import { capOutput } from "./cap-output.js";
import type { ToolContext, ToolResult } from "./tool.js";

/** Default and largest timeout of shell and execute_code, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 120;
export const MAX_TIMEOUT_SECONDS = 3600;
/** Pause between SIGTERM and SIGKILL to the process group, in milliseconds. */
const KILL_GRACE_MS = 2000;
/** After a kill, how long to wait for the killed group to end, in milliseconds. */
const GROUP_EXIT_WAIT_MS = 1000;
/** How long output pipes may stay open after the main process exited (background jobs), in milliseconds. */
const PIPE_GRACE_MS = 2000;
/** Per stream, the first HEAD_KEEP and the last ~TAIL_KEEP bytes are kept in memory; the middle is dropped. */
const HEAD_KEEP = 8 * 1024 * 1024;
const TAIL_KEEP = 2 * 1024 * 1024;

export interface RunProcessOptions {
	/** Executable and arguments; no shell is involved unless `file` is one. */
	file: string;
	args: string[];
	cwd: string;
	/** Seconds before the process group is killed. */
	timeoutSeconds: number;
	signal: AbortSignal;
	/** Extra environment variables on top of this process's environment. */
	env?: Record<string, string>;
}

export interface ProcessOutcome {
	stdout: string;
	stderr: string;
	/** Exit code, or null when the process was killed by a signal or never started. */
	exitCode: number | null;
	exitSignal: NodeJS.Signals | null;
	timedOut: boolean;
	aborted: boolean;
	/** Why the process could not start (e.g. the executable is missing). */
	spawnError?: string;
	/** The main process exited but background processes kept the output open; their later output is not captured. */
	outputLeftOpen: boolean;
}

/** Keeps a stream's first and last bytes in memory and counts what it dropped in between. */
class OutputBuffer {
	private readonly head: Buffer[] = [];
	private headBytes = 0;
	private readonly tail: Buffer[] = [];
	private tailBytes = 0;
	private dropped = 0;

	push(chunk: Buffer): void {
		let rest = chunk;
		if (this.headBytes < HEAD_KEEP) {
			const take = Math.min(rest.length, HEAD_KEEP - this.headBytes);
			this.head.push(rest.subarray(0, take));
			this.headBytes += take;
			rest = rest.subarray(take);
		}
		if (rest.length === 0) return;
		this.tail.push(rest);
		this.tailBytes += rest.length;
		while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= TAIL_KEEP) {
			const first = this.tail.shift()!;
			this.tailBytes -= first.length;
			this.dropped += first.length;
		}
	}

	text(): string {
		if (this.dropped === 0) return Buffer.concat([...this.head, ...this.tail]).toString("utf8");
		const head = Buffer.concat(this.head).toString("utf8");
		const tail = Buffer.concat(this.tail).toString("utf8");
		return `${head}\n[… ${this.dropped} bytes not kept: the output was too large to hold]\n${tail}`;
	}
}

/**
 * Runs `file` with `args` in a new process group (detached), stdin closed, stdout and stderr captured.
 * On timeout or when `signal` aborts, the whole group gets SIGTERM, then SIGKILL after 2 s; after a kill the group is
 * sent SIGKILL once more when the output closes and the call waits (up to 1 s) until the group is gone, so nothing of
 * it outlives the call.
 * Resolves when the output pipes close, or 2 s after the main process exited while background processes keep them
 * open (those are left running). Contract: never rejects; a failure to start is `spawnError`.
 */
export function runProcess(options: RunProcessOptions): Promise<ProcessOutcome> {
	const outcome: ProcessOutcome = {
		stdout: "",
		stderr: "",
		exitCode: null,
		exitSignal: null,
		timedOut: false,
		aborted: false,
		outputLeftOpen: false,
	};
	if (options.signal.aborted) return Promise.resolve({ ...outcome, aborted: true });
	return new Promise((resolvePromise) => {
		const stdout = new OutputBuffer();
		const stderr = new OutputBuffer();
		let child: ReturnType<typeof spawn>;
		try {
			child = spawn(options.file, options.args, {
				cwd: options.cwd,
				env: { ...process.env, ...options.env },
				detached: true,
				stdio: ["ignore", "pipe", "pipe"],
			});
		} catch (error) {
			resolvePromise({ ...outcome, spawnError: error instanceof Error ? error.message : String(error) });
			return;
		}
		let killing = false;
		let settled = false;
		let killTimer: NodeJS.Timeout | undefined;
		let pipeTimer: NodeJS.Timeout | undefined;

		const signalGroup = (signal: NodeJS.Signals) => {
			if (child.pid === undefined) return;
			try {
				process.kill(-child.pid, signal);
			} catch {
				// The group is already gone.
			}
		};
		const stop = (reason: "timeout" | "abort") => {
			if (killing || settled) return;
			killing = true;
			if (reason === "timeout") outcome.timedOut = true;
			else outcome.aborted = true;
			signalGroup("SIGTERM");
			killTimer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
		};
		const timeoutTimer = setTimeout(() => stop("timeout"), options.timeoutSeconds * 1000);
		const onAbort = () => stop("abort");
		options.signal.addEventListener("abort", onAbort, { once: true });

		const finish = () => {
			if (settled) return;
			settled = true;
			clearTimeout(timeoutTimer);
			clearTimeout(killTimer);
			clearTimeout(pipeTimer);
			options.signal.removeEventListener("abort", onAbort);
			outcome.stdout = stdout.text();
			outcome.stderr = stderr.text();
			if (!killing || child.pid === undefined) {
				resolvePromise(outcome);
				return;
			}
			signalGroup("SIGKILL");
			void groupGone(child.pid).then(() => resolvePromise(outcome));
		};

		child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
		child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
		child.on("error", (error) => {
			if (child.pid === undefined) {
				outcome.spawnError = error.message;
				finish();
			}
		});
		child.on("exit", (code, signal) => {
			outcome.exitCode = code;
			outcome.exitSignal = signal;
			pipeTimer = setTimeout(() => {
				outcome.outputLeftOpen = true;
				child.stdout?.destroy();
				child.stderr?.destroy();
				finish();
			}, PIPE_GRACE_MS);
		});
		child.on("close", (code, signal) => {
			if (outcome.exitCode === null && outcome.exitSignal === null) {
				outcome.exitCode = code;
				outcome.exitSignal = signal;
			}
			finish();
		});
	});
}

/**
 * True while group `groupId` has a member that is not a zombie. Zombies count as gone: they hold nothing and wait
 * only for whoever reaps orphans. Without /proc, any member counts.
 */
function groupAlive(groupId: number): boolean {
	try {
		process.kill(-groupId, 0);
	} catch {
		return false;
	}
	let entries: string[];
	try {
		entries = readdirSync("/proc");
	} catch {
		return true;
	}
	for (const entry of entries) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
			// Fields after "(command)": state, parent id, process group id, …
			const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			if (Number(group) === groupId && state !== "Z" && state !== "X") return true;
		} catch {
			// The process ended while we looked.
		}
	}
	return false;
}

/** Resolves once group `groupId` has no live member, or after GROUP_EXIT_WAIT_MS at most. Never rejects. */
async function groupGone(groupId: number): Promise<void> {
	for (let waited = 0; waited < GROUP_EXIT_WAIT_MS && groupAlive(groupId); waited += 10) {
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/** The last line of a process's output: how it ended. */
export function statusLine(outcome: ProcessOutcome, timeoutSeconds: number): string {
	if (outcome.spawnError !== undefined) return `[failed to start: ${outcome.spawnError}]`;
	if (outcome.timedOut) return `[killed: timeout after ${timeoutSeconds} s]`;
	if (outcome.aborted) return `[killed: aborted]`;
	if (outcome.exitSignal) return `[killed: signal ${outcome.exitSignal}]`;
	return `[exit ${outcome.exitCode ?? "unknown"}]`;
}

/** Strips ANSI escapes and keeps only what a terminal would finally show of lines redrawn with "\r" (progress bars). */
export function cleanTerminalText(text: string): string {
	const stripped = stripAnsi(text);
	if (!stripped.includes("\r")) return stripped;
	return stripped
		.split("\n")
		.map((line) => {
			const body = line.endsWith("\r") ? line.slice(0, -1) : line;
			const last = body.lastIndexOf("\r");
			return last === -1 ? body : body.slice(last + 1);
		})
		.join("\n");
}

const withNewline = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);

/** stdout, then "[stderr]" and stderr when there is any, without the status line. ANSI escapes stripped. */
export function processBody(outcome: ProcessOutcome): string {
	const stdout = cleanTerminalText(outcome.stdout);
	const stderr = cleanTerminalText(outcome.stderr);
	let body = withNewline(stdout);
	if (stderr !== "") body += `[stderr]\n${withNewline(stderr)}`;
	if (outcome.outputLeftOpen) {
		body += "[note: background processes still hold the output open; their later output is not captured]\n";
	}
	return body;
}

/**
 * The tool result of a finished process: stdout, `[stderr]` + stderr, then the status line (`[exit N]`,
 * `[killed: timeout after N s]`, `[killed: aborted]`). Output over the cap keeps head and tail lines and the full text
 * goes to a spill file; the status line is always kept. ok only for exit code 0. Never throws.
 */
export async function processToolResult(
	outcome: ProcessOutcome,
	timeoutSeconds: number,
	context: ToolContext,
): Promise<ToolResult> {
	const body = processBody(outcome);
	const status = statusLine(outcome, timeoutSeconds);
	const full = `${body}${status}`;
	// The spill holds the status line too, so the file is the complete answer on its own.
	const capped = await capOutput(body, context.spillDir, { spillText: full });
	const ok = outcome.spawnError === undefined && !outcome.timedOut && !outcome.aborted && outcome.exitCode === 0;
	const errorCode = ok
		? undefined
		: outcome.spawnError !== undefined
			? "spawn_failed"
			: outcome.timedOut
				? "timeout"
				: outcome.aborted
					? "aborted"
					: "exit_nonzero";
	const lineCount = body === "" ? 0 : body.split("\n").length - 1;
	return {
		ok,
		content: `${withNewline(capped.text)}${status}`,
		display: `${status.slice(1, -1)} · ${lineCount} ${lineCount === 1 ? "line" : "lines"}${capped.truncated ? " (capped)" : ""}`,
		errorCode,
		details: {
			exitCode: outcome.exitCode,
			timedOut: outcome.timedOut,
			aborted: outcome.aborted,
			spillPath: capped.spillPath,
			bytes: utf8Bytes(full),
		},
	};
}
