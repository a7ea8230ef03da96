import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type Tool as ListedTool, McpError } from "@modelcontextprotocol/sdk/types.js";
import { oneLine } from "../../llm/errors.js";
import type { McpServerSpec } from "./config.js";
import { type ProcessExit, ProcessTransport } from "./process-transport.js";

export type { ListedTool };

/** How snowpea introduces itself to servers. */
const CLIENT_INFO = { name: "snowpea", version: "0.1.0" };
/** Most pages of tools/list read from one server. */
const MAX_LIST_PAGES = 100;

/** The outcome of one call: the server's raw answer, or why there is none. */
export type CallOutcome =
	| { ok: true; result: unknown }
	| {
			ok: false;
			errorCode: "aborted" | "timeout" | "server_exited" | "server_unavailable" | "tool_failed";
			message: string;
	  };

type State =
	| { kind: "idle" }
	| { kind: "ready"; client: Client; transport: Transport }
	/** The server went away; the next call tries one restart (a failed restart leads to "failed"). */
	| { kind: "exited"; reason: string }
	/** It could not be (re)started: its tools stay unavailable for the session. */
	| { kind: "failed"; message: string }
	| { kind: "closed" };

/**
 * One MCP server: started on demand, restarted once after it dies, ended by `close()`.
 * Every method resolves (never rejects): failures are returned as data.
 */
export class McpServerConnection {
	private state: State = { kind: "idle" };
	private starting: Promise<{ ok: true } | { ok: false; message: string }> | undefined;

	constructor(
		readonly spec: McpServerSpec,
		private readonly options: { cwd: string; connectTimeoutMs: number },
	) {}

	get name(): string {
		return this.spec.name;
	}

	/** Starts the server and lists all of its tools, both within the connect timeout together. */
	async listTools(): Promise<{ ok: true; tools: ListedTool[] } | { ok: false; message: string }> {
		const deadline = Date.now() + this.options.connectTimeoutMs;
		const started = await this.ensureStarted();
		if (!started.ok) return started;
		if (this.state.kind !== "ready") return { ok: false, message: this.unavailableMessage() };
		const client = this.state.client;
		const tools: ListedTool[] = [];
		try {
			let cursor: string | undefined;
			for (let page = 0; page < MAX_LIST_PAGES; page++) {
				const listed = await client.listTools(cursor === undefined ? {} : { cursor }, {
					timeout: Math.max(1, deadline - Date.now()),
				});
				tools.push(...listed.tools);
				cursor = listed.nextCursor;
				if (cursor === undefined) break;
			}
		} catch (error) {
			return { ok: false, message: `MCP server ${this.name} could not list its tools: ${describe(error)}` };
		}
		return { ok: true, tools };
	}

	/**
	 * Calls `tool` with `args`. A server that died since the last call is restarted first (once per death).
	 * `signal` and `timeoutMs` cancel the request (the server is sent notifications/cancelled).
	 */
	async call(
		tool: string,
		args: Record<string, unknown>,
		options: { signal: AbortSignal; timeoutMs: number },
	): Promise<CallOutcome> {
		if (options.signal.aborted) return { ok: false, errorCode: "aborted", message: `the call was cancelled` };
		if (this.state.kind === "exited" || this.state.kind === "idle") {
			const started = await this.ensureStarted();
			if (!started.ok) return { ok: false, errorCode: "server_unavailable", message: started.message };
		}
		if (this.state.kind !== "ready") {
			return { ok: false, errorCode: "server_unavailable", message: this.unavailableMessage() };
		}
		const client = this.state.client;
		try {
			const result = await client.callTool({ name: tool, arguments: args }, undefined, {
				signal: options.signal,
				timeout: options.timeoutMs,
			});
			return { ok: true, result };
		} catch (error) {
			if (options.signal.aborted) return { ok: false, errorCode: "aborted", message: "the call was cancelled" };
			const state = this.state as State;
			if (state.kind === "exited") {
				return {
					ok: false,
					errorCode: "server_exited",
					message: `${state.reason}; its tools are unavailable until it restarts — restarting on the next call`,
				};
			}
			if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
				return {
					ok: false,
					errorCode: "timeout",
					message: `MCP server ${this.name} did not answer within ${formatSeconds(options.timeoutMs)}; the request was cancelled`,
				};
			}
			return { ok: false, errorCode: "tool_failed", message: `MCP server ${this.name}: ${describe(error)}` };
		}
	}

	/** Ends the server (stdio: its whole process group). Later calls fail with "shut down". Never rejects. */
	async close(): Promise<void> {
		const state = this.state;
		this.state = { kind: "closed" };
		if (state.kind === "ready") await closeQuietly(state.client, state.transport);
		else if (this.starting) await this.starting;
	}

	/** Starts the server unless it is running; shares one start among concurrent callers. */
	private ensureStarted(): Promise<{ ok: true } | { ok: false; message: string }> {
		if (this.state.kind === "ready") return Promise.resolve({ ok: true });
		if (this.starting) return this.starting;
		const state = this.state;
		if (state.kind === "closed") return Promise.resolve({ ok: false, message: this.unavailableMessage() });
		if (state.kind === "failed") return Promise.resolve({ ok: false, message: state.message });
		const restarting = state.kind === "exited" ? state.reason : undefined;
		this.starting = this.start().then((outcome) => {
			this.starting = undefined;
			if (outcome.ok) return outcome;
			const message = restarting
				? `${restarting} and could not be restarted (${outcome.message}); its tools are unavailable for the rest of this session`
				: `MCP server ${this.name} could not be started: ${outcome.message}`;
			if (this.state.kind !== "closed") this.state = { kind: "failed", message };
			return { ok: false, message };
		});
		return this.starting;
	}

	private async start(): Promise<{ ok: true } | { ok: false; message: string }> {
		let transport: Transport;
		try {
			transport = this.createTransport();
		} catch (error) {
			return { ok: false, message: describe(error) };
		}
		const client = new Client(CLIENT_INFO, { capabilities: {} });
		let connected = false;
		client.onclose = () => {
			if (!connected || this.state.kind !== "ready" || this.state.client !== client) return;
			this.state = { kind: "exited", reason: this.exitReason(transport) };
		};
		client.onerror = () => {
			// Stray stdout lines and transport hiccups: the call that is hurt by them reports its own error.
		};
		try {
			await client.connect(transport, { timeout: this.options.connectTimeoutMs });
		} catch (error) {
			const stderr = transport instanceof ProcessTransport ? lastLine(transport.stderrTail) : "";
			const exit = transport instanceof ProcessTransport ? transport.exit : undefined;
			const detail = isMissingCommand(error)
				? `command ${JSON.stringify(this.commandName())} was not found`
				: exit
					? `it ${describeExit(exit)} before it was ready`
					: error instanceof McpError && error.code === ErrorCode.RequestTimeout
						? `it did not answer within ${formatSeconds(this.options.connectTimeoutMs)}`
						: describe(error);
			await closeQuietly(client, transport);
			return { ok: false, message: stderr ? `${detail}; its last stderr line: ${stderr}` : detail };
		}
		if (this.state.kind === "closed") {
			await closeQuietly(client, transport);
			return { ok: false, message: "MCP servers were shut down" };
		}
		connected = true;
		this.state = { kind: "ready", client, transport };
		return { ok: true };
	}

	private createTransport(): Transport {
		const transport = this.spec.transport;
		if (transport.kind === "stdio") {
			return new ProcessTransport({
				command: transport.command,
				args: transport.args,
				env: transport.env,
				cwd: this.options.cwd,
			});
		}
		const requestInit = { headers: transport.headers };
		return transport.kind === "sse"
			? new SSEClientTransport(new URL(transport.url), { requestInit })
			: new StreamableHTTPClientTransport(new URL(transport.url), { requestInit });
	}

	/** "MCP server x exited (code 3)", or for url servers "MCP server x closed the connection". */
	private exitReason(transport: Transport): string {
		if (!(transport instanceof ProcessTransport)) return `MCP server ${this.name} closed the connection`;
		const how = transport.exit ? describeExit(transport.exit) : "closed its output";
		return `MCP server ${this.name} ${how}`;
	}

	private unavailableMessage(): string {
		const state = this.state;
		if (state.kind === "failed") return state.message;
		if (state.kind === "closed") return `MCP server ${this.name} was shut down`;
		if (state.kind === "exited") return `${state.reason}; its tools are unavailable`;
		return `MCP server ${this.name} is not running`;
	}

	private commandName(): string {
		return this.spec.transport.kind === "stdio" ? this.spec.transport.command : this.spec.transport.url;
	}
}

async function closeQuietly(client: Client, transport: Transport): Promise<void> {
	try {
		await client.close();
	} catch {
		// Closing is best effort.
	}
	try {
		await transport.close();
	} catch {
		// Already closed.
	}
}

/** "exited (code 3)" or "exited (signal SIGKILL)". */
function describeExit(exit: ProcessExit): string {
	return exit.signal ? `exited (signal ${exit.signal})` : `exited (code ${exit.code ?? "unknown"})`;
}

function isMissingCommand(error: unknown): boolean {
	return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/** The error's message, with its cause when it has one ("fetch failed (connect ECONNREFUSED 127.0.0.1:80)"). */
function describe(error: unknown): string {
	if (!(error instanceof Error)) return oneLine(String(error));
	const cause = error.cause instanceof Error ? error.cause.message : undefined;
	return oneLine(cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message);
}

function lastLine(text: string): string {
	const lines = text.split("\n").filter((line) => line.trim() !== "");
	return oneLine(lines.at(-1) ?? "", 200);
}

function formatSeconds(milliseconds: number): string {
	const seconds = milliseconds / 1000;
	return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
