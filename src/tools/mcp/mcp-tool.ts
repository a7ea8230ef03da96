import { createHash } from "node:crypto";
import { failure, type Tool, type ToolContext, type ToolResult } from "../tool.js";
import type { ListedTool } from "./server-connection.js";

/** Longest tool name the providers accept. */
export const MAX_TOOL_NAME_LENGTH = 64;
/** Longest description sent for an MCP tool, in characters. */
export const MAX_DESCRIPTION_CHARACTERS = 1_000;

/**
 * `mcp__<server>__<tool>`, with characters the providers refuse replaced by "_"; a name over 64 characters keeps its
 * first 55 and gets "_" plus 8 hex digits of a hash of the full name, so it stays unique and stable across runs.
 */
export function mcpToolName(server: string, tool: string): string {
	const name = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
	if (name.length <= MAX_TOOL_NAME_LENGTH) return name;
	const digest = createHash("sha256").update(`${server}\u0000${tool}`).digest("hex").slice(0, 8);
	return `${name.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${digest}`;
}

/** Runs a call whose arguments are already known to be a JSON object. Must never throw. */
export type McpInvoke = (args: Record<string, unknown>, context: ToolContext) => Promise<ToolResult>;

/**
 * A snowpea Tool for one listed MCP tool. Permission "network" unless the server marks it readOnlyHint (then "read"
 * and readOnly); deferred under group `mcp:<server>`. The parameters are the server's inputSchema (without `$schema`,
 * with `type: "object"` and `properties` ensured); arguments are only checked to be a JSON object — the server
 * validates the rest and its complaint comes back as a failed result.
 */
export function mcpTool(server: string, listed: ListedTool, invoke: McpInvoke): Tool {
	const name = mcpToolName(server, listed.name);
	const readOnly = listed.annotations?.readOnlyHint === true;
	const description = clipDescription(
		listed.description?.trim() || listed.annotations?.title || listed.title || `${listed.name} (MCP server ${server})`,
	);
	const { $schema: _drop, ...schema } = listed.inputSchema as Record<string, unknown>;
	const parameters: Record<string, unknown> = { ...schema, type: "object", properties: schema.properties ?? {} };
	return {
		name,
		description,
		permission: readOnly ? "read" : "network",
		readOnly,
		group: `mcp:${server}`,
		source: `mcp:${server}`,
		definition: { name, description, parameters },
		async execute(rawArguments, context) {
			const parsed = parseObject(rawArguments);
			if ("error" in parsed) return failure("invalid_arguments", `${name}: ${parsed.error}`);
			try {
				return await invoke(parsed.value, context);
			} catch (error) {
				return failure("tool_failed", `${name} failed: ${error instanceof Error ? error.message : String(error)}`);
			}
		},
	};
}

function clipDescription(text: string): string {
	const characters = Array.from(text);
	if (characters.length <= MAX_DESCRIPTION_CHARACTERS) return text;
	return `${characters.slice(0, MAX_DESCRIPTION_CHARACTERS - 1).join("")}…`;
}

function parseObject(raw: string): { value: Record<string, unknown> } | { error: string } {
	const text = raw.trim() === "" ? "{}" : raw;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		return {
			error: `arguments are not valid JSON (${error instanceof Error ? error.message : String(error)}); send one JSON object`,
		};
	}
	if (value === null || typeof value !== "object" || Array.isArray(value)) {
		const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
		return { error: `arguments must be one JSON object, not ${kind}` };
	}
	return { value: value as Record<string, unknown> };
}
