import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { oneLine } from "../../llm/errors.js";

/** How snowpea reaches one MCP server: a child process over stdio, or a url (streamable HTTP, or legacy SSE). */
export type McpTransportSpec =
	| { kind: "stdio"; command: string; args: string[]; env: Record<string, string> }
	| { kind: "http" | "sse"; url: string; headers: Record<string, string> };

/** One usable server entry. */
export interface McpServerSpec {
	/** Matches SERVER_NAME_PATTERN. */
	name: string;
	/** Where the entry came from, for messages: "settings (mcp.servers)" or the .mcp.json path. */
	origin: string;
	transport: McpTransportSpec;
}

/** Every usable server, sorted by name, plus one warning per entry or file that was skipped. */
export interface McpConfig {
	servers: McpServerSpec[];
	warnings: string[];
}

/** Server names become part of tool names (`mcp__<server>__<tool>`), so they stay within this alphabet. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

const StringRecord = z.record(z.string(), z.string());

const StdioEntry = z.object({
	type: z.literal("stdio").optional(),
	command: z.string().min(1, "command is empty"),
	args: z.array(z.string()).default([]),
	env: StringRecord.default({}),
});

const UrlEntry = z.object({
	type: z.enum(["http", "sse"]).optional(),
	url: z.string().min(1, "url is empty"),
	headers: StringRecord.default({}),
});

export interface LoadMcpConfigOptions {
	/** The value of the `mcp.servers` setting (any shape; it is validated here). */
	settingsServers?: unknown;
	/** The project directory whose `.mcp.json` is read, if it exists. */
	projectDirectory?: string;
	/** Variables for `${NAME}` and `${NAME:-default}` in commands, args, env values, urls and headers (default process.env). */
	environment?: NodeJS.ProcessEnv;
}

/**
 * Reads the servers of `mcp.servers` in the settings and of `<project>/.mcp.json` (`{ "mcpServers": { … } }`).
 * A name in both comes from the settings. A bad entry is skipped with one warning naming the server and the problem;
 * an unreadable or malformed .mcp.json is skipped with one warning. A missing .mcp.json is not a problem.
 * Contract: never throws. Servers are sorted by name, so tool lists come out in the same order every run.
 */
export function loadMcpConfig(options: LoadMcpConfigOptions): McpConfig {
	const environment = options.environment ?? process.env;
	const warnings: string[] = [];
	const byName = new Map<string, McpServerSpec>();
	if (options.projectDirectory !== undefined) {
		const path = join(options.projectDirectory, ".mcp.json");
		const project = readProjectFile(path);
		if (project.warning) warnings.push(project.warning);
		if (project.servers !== undefined) {
			for (const spec of parseMcpServers(project.servers, path, environment, warnings)) byName.set(spec.name, spec);
		}
	}
	if (options.settingsServers !== undefined) {
		for (const spec of parseMcpServers(options.settingsServers, "settings (mcp.servers)", environment, warnings)) {
			byName.set(spec.name, spec);
		}
	}
	const servers = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
	return { servers, warnings };
}

/**
 * Validates a `{ "<name>": { command, args?, env? } | { url, headers? } }` map. Each bad entry adds one warning to
 * `warnings` and is left out. Never throws.
 */
export function parseMcpServers(
	raw: unknown,
	origin: string,
	environment: NodeJS.ProcessEnv,
	warnings: string[],
): McpServerSpec[] {
	if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
		warnings.push(`MCP servers in ${origin} skipped: expected an object mapping server names to entries`);
		return [];
	}
	const servers: McpServerSpec[] = [];
	for (const [name, entry] of Object.entries(raw)) {
		const parsed = parseEntry(name, entry, environment);
		if ("problem" in parsed) warnings.push(`MCP server "${name}" in ${origin} skipped: ${parsed.problem}`);
		else servers.push({ name, origin, transport: parsed.transport });
	}
	return servers;
}

function parseEntry(
	name: string,
	entry: unknown,
	environment: NodeJS.ProcessEnv,
): { transport: McpTransportSpec } | { problem: string } {
	if (!SERVER_NAME_PATTERN.test(name)) {
		return { problem: "a server name may only use letters, digits, '_' and '-'" };
	}
	if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
		return { problem: "expected an object with a command or a url" };
	}
	const hasCommand = "command" in entry;
	const hasUrl = "url" in entry;
	if (hasCommand && hasUrl) return { problem: "give either a command or a url, not both" };
	if (!hasCommand && !hasUrl) return { problem: "needs a command (stdio server) or a url (HTTP server)" };
	try {
		if (hasCommand) {
			const checked = StdioEntry.safeParse(entry);
			if (!checked.success) return { problem: describeIssues(checked.error) };
			const expand = (text: string) => expandVariables(text, environment);
			return {
				transport: {
					kind: "stdio",
					command: expand(checked.data.command),
					args: checked.data.args.map(expand),
					env: Object.fromEntries(Object.entries(checked.data.env).map(([key, value]) => [key, expand(value)])),
				},
			};
		}
		const checked = UrlEntry.safeParse(entry);
		if (!checked.success) return { problem: describeIssues(checked.error) };
		const url = expandVariables(checked.data.url, environment);
		if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
			return { problem: `url ${JSON.stringify(url)} is not an http(s) url` };
		}
		const headers = Object.fromEntries(
			Object.entries(checked.data.headers).map(([key, value]) => [key, expandVariables(value, environment)]),
		);
		return { transport: { kind: checked.data.type ?? "http", url, headers } };
	} catch (error) {
		return { problem: error instanceof Error ? error.message : String(error) };
	}
}

function describeIssues(error: z.ZodError): string {
	return error.issues
		.map((issue) => `${issue.path.length ? issue.path.join(".") : "entry"}: ${issue.message}`)
		.join("; ");
}

/**
 * Replaces `${NAME}` with the variable's value and `${NAME:-fallback}` with the value, or the fallback when the
 * variable is unset or empty. Throws an Error naming the variable when one without a fallback is unset.
 */
export function expandVariables(text: string, environment: NodeJS.ProcessEnv): string {
	return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback?: string) => {
		const value = environment[name];
		if (value !== undefined && value !== "") return value;
		if (fallback !== undefined) return fallback;
		if (value !== undefined) return value;
		throw new Error(`environment variable ${name} is not set`);
	});
}

function readProjectFile(path: string): { servers?: unknown; warning?: string } {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
		return {
			warning: `${path} could not be read (${error instanceof Error ? error.message : String(error)}); its MCP servers are skipped`,
		};
	}
	let data: unknown;
	try {
		data = JSON.parse(text);
	} catch (error) {
		return {
			warning: `${path} is not valid JSON (${oneLine(error instanceof Error ? error.message : String(error))}); its MCP servers are skipped`,
		};
	}
	if (data === null || typeof data !== "object" || Array.isArray(data)) {
		return { warning: `${path} should hold an object with "mcpServers"; its MCP servers are skipped` };
	}
	return { servers: (data as Record<string, unknown>).mcpServers };
}
