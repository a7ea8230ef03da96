import { type ChildProcess, spawn } from "node:child_process";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface ProcessTransportOptions {
	command: string;
	args: string[];
	/** Added to the SDK's safe default environment (HOME, PATH, SHELL, TERM, USER, LOGNAME). */
	env: Record<string, string>;
	cwd: string;
}

/** How the server process ended. */
export interface ProcessExit {
	code: number | null;
	signal: NodeJS.Signals | null;
}

const STDERR_KEEP_CHARACTERS = 4_096;
const CLOSE_GRACE_MS = 1_000;

/**
 * An MCP stdio transport that, unlike the SDK's, remembers how the server process ended (`exit`) and the end of
 * what it wrote to stderr (`stderrTail`), and runs the server in its own process group so `close()` also ends the
 * processes it started (an `npx` wrapper's child, for one). stderr never reaches the terminal.
 * `onclose` fires once, after the process ended and its pipes closed, whether or not `close()` was called.
 */
export class ProcessTransport implements Transport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: (message: JSONRPCMessage) => void;

	/** Set once the process has ended. */
	exit: ProcessExit | undefined;
	private child: ChildProcess | undefined;
	private closed: Promise<void> | undefined;
	private readonly readBuffer = new ReadBuffer();
	private stderrText = "";

	constructor(private readonly options: ProcessTransportOptions) {}

	/** The last few KB the server wrote to stderr. */
	get stderrTail(): string {
		return this.stderrText;
	}

	/** Spawns the server; rejects when it cannot be started (a missing command: `spawn <command> ENOENT`). */
	start(): Promise<void> {
		if (this.child) return Promise.reject(new Error("the server process is already running"));
		return new Promise((resolve, reject) => {
			let spawned = false;
			const child = spawn(this.options.command, this.options.args, {
				cwd: this.options.cwd,
				env: { ...getDefaultEnvironment(), ...this.options.env },
				stdio: ["pipe", "pipe", "pipe"],
				detached: process.platform !== "win32",
				windowsHide: true,
			});
			this.child = child;
			this.closed = new Promise((closedResolve) => {
				child.once("close", (code, signal) => {
					this.exit = { code, signal };
					this.child = undefined;
					closedResolve();
					this.onclose?.();
				});
			});
			child.on("error", (error) => {
				if (!spawned) reject(error);
				else this.onerror?.(error);
			});
			child.once("spawn", () => {
				spawned = true;
				resolve();
			});
			child.stdin?.on("error", (error) => this.onerror?.(error));
			child.stdout?.on("error", (error) => this.onerror?.(error));
			child.stdout?.on("data", (chunk: Buffer) => this.receive(chunk));
			child.stderr?.setEncoding("utf8");
			child.stderr?.on("data", (text: string) => {
				this.stderrText = (this.stderrText + text).slice(-STDERR_KEEP_CHARACTERS);
			});
		});
	}

	send(message: JSONRPCMessage): Promise<void> {
		const stdin = this.child?.stdin;
		if (!stdin || stdin.destroyed) return Promise.reject(new Error("the server process is not running"));
		return new Promise((resolve) => {
			if (stdin.write(serializeMessage(message))) resolve();
			else stdin.once("drain", resolve);
		});
	}

	/**
	 * Ends the server: closes its stdin, then SIGTERM to its process group after a grace period, then SIGKILL.
	 * Resolves once the process is gone (or after the last signal was sent). Never rejects.
	 */
	async close(): Promise<void> {
		const child = this.child;
		const closed = this.closed;
		if (!child || !closed) return;
		try {
			child.stdin?.end();
		} catch {
			// The pipe is already gone; the signals below still apply.
		}
		for (const signal of ["SIGTERM", "SIGKILL"] as const) {
			if (await settlesWithin(closed, CLOSE_GRACE_MS)) break;
			killGroup(child, signal);
		}
		await settlesWithin(closed, CLOSE_GRACE_MS);
		this.readBuffer.clear();
	}

	private receive(chunk: Buffer): void {
		try {
			this.readBuffer.append(chunk);
		} catch (error) {
			this.onerror?.(error instanceof Error ? error : new Error(String(error)));
			void this.close();
			return;
		}
		for (;;) {
			try {
				const message = this.readBuffer.readMessage();
				if (message === null) return;
				this.onmessage?.(message);
			} catch (error) {
				// A line that is not JSON-RPC (a server logging to stdout): report it and read on.
				this.onerror?.(error instanceof Error ? error : new Error(String(error)));
			}
		}
	}
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	try {
		if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, signal);
		else child.kill(signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// Already gone.
		}
	}
}

function settlesWithin(promise: Promise<void>, milliseconds: number): Promise<boolean> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<boolean>((resolve) => {
		timer = setTimeout(() => resolve(false), milliseconds);
		timer.unref();
	});
	return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}
