import { failure, type Tool } from "../tool.js";
import { convertCallResult } from "./call-result.js";
import type { McpConfig } from "./config.js";
import { mcpTool } from "./mcp-tool.js";
import { McpServerConnection } from "./server-connection.js";

/** How long a server gets to start and list its tools at session start, in milliseconds. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** How long one tool call may take before it is cancelled, in milliseconds. */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;

export interface McpManagerOptions {
	/** Working directory of stdio servers. */
	cwd: string;
	/** The session's attachment store, asked at call time. */
	attachmentDirectory: () => string;
	/** Whether the session's model (asked at call time) can see images; when not, images are stored but not attached. */
	vision: () => boolean;
	/** Limit for starting one server and listing its tools (default 30 s). */
	connectTimeoutMs?: number;
	/** Limit for one tool call (default 120 s). */
	callTimeoutMs?: number;
}

/**
 * The session's MCP servers. Nothing starts until `tools()`, which starts every server at once, lists their tools
 * and keeps them running for the calls. A server that dies is restarted by the next call to one of its tools.
 * Contract: no method throws or rejects; problems become `warnings` or failed tool results.
 */
export class McpManager {
	private readonly connections: McpServerConnection[];
	private readonly warningList: string[];
	private listing: Promise<Tool[]> | undefined;
	private closing: Promise<void> | undefined;

	private constructor(
		config: McpConfig,
		private readonly options: McpManagerOptions,
	) {
		this.warningList = [...config.warnings];
		const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
		this.connections = config.servers.map(
			(spec) => new McpServerConnection(spec, { cwd: options.cwd, connectTimeoutMs }),
		);
	}

	/** A manager for the servers of `config` (from loadMcpConfig); its warnings start with the config's. Starts nothing. */
	static fromConfig(config: McpConfig, options: McpManagerOptions): McpManager {
		return new McpManager(config, options);
	}

	/** The configured server names, sorted. */
	get serverNames(): string[] {
		return this.connections.map((connection) => connection.name);
	}

	/**
	 * One line each, in the order they arose: skipped config entries, then servers that failed to start or list
	 * (one per server), then tools left out because their name clashed.
	 */
	get warnings(): readonly string[] {
		return this.warningList;
	}

	/**
	 * Every server's tools as `mcp__<server>__<tool>`, servers in name order, each server's tools in its own order.
	 * Starts the servers the first time (in parallel, each within the connect timeout); later calls return the same
	 * list. A server that fails contributes no tools and one warning.
	 */
	tools(): Promise<Tool[]> {
		this.listing ??= this.listAll();
		return this.listing;
	}

	/** Ends every server (stdio servers with their process groups). Idempotent; never rejects. */
	close(): Promise<void> {
		this.closing ??= Promise.all(this.connections.map((connection) => connection.close())).then(() => undefined);
		return this.closing;
	}

	private async listAll(): Promise<Tool[]> {
		const listed = await Promise.all(this.connections.map((connection) => connection.listTools()));
		const tools: Tool[] = [];
		const names = new Set<string>();
		listed.forEach((outcome, index) => {
			const connection = this.connections[index] as McpServerConnection;
			if (!outcome.ok) {
				this.warningList.push(`${outcome.message}; its tools are left out`);
				return;
			}
			for (const entry of outcome.tools) {
				const tool = mcpTool(connection.name, entry, async (args, context) => {
					const outcome = await connection.call(entry.name, args, {
						signal: context.signal,
						timeoutMs: this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
					});
					if (!outcome.ok) return failure(outcome.errorCode, `${tool.name}: ${outcome.message}`);
					return convertCallResult(outcome.result, {
						toolName: tool.name,
						spillDir: context.spillDir,
						attachmentDirectory: context.attachmentDir ?? this.options.attachmentDirectory(),
						vision: this.options.vision(),
					});
				});
				if (names.has(tool.name)) {
					this.warningList.push(
						`MCP server ${connection.name}: tool ${JSON.stringify(entry.name)} left out, its name ${tool.name} is taken`,
					);
					continue;
				}
				names.add(tool.name);
				tools.push(tool);
			}
		});
		return tools;
	}
}
