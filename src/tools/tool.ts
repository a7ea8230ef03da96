import { z } from "zod";
import type { ImageRef, ToolDefinition } from "../llm/types.js";

/** What a tool may touch; permission modes decide from this which calls need approval. */
export type Permission = "read" | "write" | "exec" | "network";

/** Everything a tool may use at run time. Tools get no other handle on the session. */
export interface ToolContext {
	/** The working directory: relative paths resolve against it. */
	cwd: string;
	/** snowpea's home ($SNOWPEA_HOME, default ~/.snowpea). */
	home: string;
	sessionId: string;
	/** The call being answered. */
	callId: string;
	signal: AbortSignal;
	/** Directory for spill files of this session (full text of capped output); created 0700 on first use. */
	spillDir: string;
	/**
	 * Directory for this session's image attachments, when the session has one. Tools shared between sessions (a
	 * parent's MCP connections used by its children) store images here rather than where they were created.
	 */
	attachmentDir?: string;
	/** Present only when a person can answer (interactive sessions). */
	askUser?: (question: string) => Promise<string>;
}

/**
 * The outcome of one call.
 * - content: what the model reads (short, capped, with hints on how to get more).
 * - display: what a person sees in the tool log (defaults to content's first line).
 * - errorCode: machine-readable reason on failure ("invalid_arguments", "repeat_blocked", …).
 * - details: structured data for the store and UI, never sent to the model.
 */
export interface ToolResult {
	ok: boolean;
	content: string;
	display?: string;
	errorCode?: string;
	details?: Record<string, unknown>;
	/** Images the model should see: the loop attaches them in a user message after this round's results. */
	images?: ImageRef[];
}

/** A tool as the rest of snowpea sees it: arguments arrive as raw JSON text. */
export interface Tool {
	readonly name: string;
	readonly description: string;
	readonly permission: Permission;
	readonly readOnly: boolean;
	/** Deferred group ("browser", "mcp:github"); undefined for core tools that are always sent. */
	readonly group?: string;
	/** Where the tool comes from: "builtin", "mcp:<server>", "agent". */
	readonly source: string;
	/** The model-facing definition, rendered once so every round sends identical bytes. */
	readonly definition: ToolDefinition;
	/**
	 * Parses and validates `rawArguments`, then runs.
	 * Contract: never throws; bad JSON, a schema mismatch or an exception inside the tool become a failed result.
	 */
	execute(rawArguments: string, context: ToolContext): Promise<ToolResult>;
}

export interface ToolSpec<Schema extends z.ZodType> {
	name: string;
	description: string;
	parameters: Schema;
	permission: Permission;
	readOnly: boolean;
	group?: string;
	source?: string;
	run(args: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
}

/** Builds a Tool from a zod schema and a run function. */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): Tool {
	const { $schema: _drop, ...parameters } = z.toJSONSchema(spec.parameters, { io: "input" }) as Record<string, unknown>;
	return {
		name: spec.name,
		description: spec.description,
		permission: spec.permission,
		readOnly: spec.readOnly,
		group: spec.group,
		source: spec.source ?? "builtin",
		definition: { name: spec.name, description: spec.description, parameters },
		async execute(rawArguments, context) {
			const parsed = parseArguments(rawArguments);
			if (!parsed.ok) return failure("invalid_arguments", `${spec.name}: ${parsed.error}`);
			const checked = spec.parameters.safeParse(parsed.value);
			if (!checked.success) {
				const problems = checked.error.issues
					.map((issue) => `${issue.path.length ? issue.path.join(".") : "arguments"}: ${issue.message}`)
					.join("; ");
				return failure("invalid_arguments", `${spec.name}: invalid arguments — ${problems}`);
			}
			try {
				return await spec.run(checked.data, context);
			} catch (error) {
				return failure("tool_failed", `${spec.name} failed: ${error instanceof Error ? error.message : String(error)}`);
			}
		},
	};
}

/** A failed result with a code the model and the logs can read. */
export function failure(errorCode: string, message: string): ToolResult {
	return { ok: false, content: message, errorCode };
}

function parseArguments(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
	const text = raw.trim() === "" ? "{}" : raw;
	try {
		return { ok: true, value: JSON.parse(text) };
	} catch (error) {
		return {
			ok: false,
			error: `arguments are not valid JSON (${error instanceof Error ? error.message : String(error)}); send one JSON object`,
		};
	}
}
