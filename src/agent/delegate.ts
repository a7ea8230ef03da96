import { z } from "zod";
import { utf8Bytes } from "../llm/text.js";
import { writeSpill } from "../tools/spill.js";
import { defineTool, failure, type Tool, type ToolResult } from "../tools/tool.js";
import { DEFAULT_ROLE_NAME, MAX_CHILD_ROUNDS, type RoleDefinition } from "./roles.js";

// delegate_task: the parent's handle on child agents. The tool validates the call, waits for a free slot
// (agents.maxConcurrent), hands the child to `spawn` (the CLI's implementation assembles and runs it) and turns the
// child's report into one tool result.

/** How a child's task ended: finished, stopped at its round budget (then asked once for its report), or failed. */
export type ChildStatus = "done" | "partial" | "failed";

/** A child session's token totals, over every request it made. */
export interface ChildUsage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	requests: number;
}

/** What the parent asked for, validated: the role is resolved and the budget decided. */
export interface ChildRequest {
	task: string;
	title?: string;
	role: RoleDefinition;
	/** Narrows the child's tools to these names (and tool_search); undefined = the role's tools. */
	tools?: string[];
	/** Tool rounds the child may use before it is asked for its report. */
	maxRounds: number;
}

/** What a child produced. */
export interface ChildReport {
	status: ChildStatus;
	/** The child's final answer ("" when it gave none). */
	report: string;
	/** Model requests of the budgeted run (the report request after the budget is not counted). */
	rounds: number;
	usage: ChildUsage;
	/** The stored child session, when one was created. */
	childSessionId?: string;
	/** Why it failed (status "failed"). */
	error?: string;
	/** One line each: things the parent should know (tools that were not available to the child). */
	warnings?: string[];
}

/** Runs one child to its end. Contract: never rejects; every failure is a report with status "failed". */
export type SpawnChild = (request: ChildRequest, signal: AbortSignal) => Promise<ChildReport>;

export interface DelegateToolOptions {
	/** `agents.maxConcurrent`: children running at once; more calls wait for a slot. */
	maxConcurrent: number;
	/** The roles a call may name; read once for the tool's description and again at each call. */
	roles: () => readonly RoleDefinition[];
}

/** A report longer than this many UTF-8 bytes goes to a spill file; the result keeps its head and the path. */
export const REPORT_INLINE_MAX_BYTES = 8 * 1024;
/** Characters of a spilled report kept in the result. */
const REPORT_HEAD_CHARACTERS = 4000;

/**
 * A counting semaphore: at most `limit` holders at once, waiters served first come first served.
 * `acquire` resolves to a release function (calling it twice releases once), or to undefined when `signal` aborts
 * before a slot is free.
 */
export class Semaphore {
	#active = 0;
	readonly #waiting: (() => void)[] = [];

	constructor(readonly limit: number) {}

	/** Holders right now. */
	get active(): number {
		return this.#active;
	}

	async acquire(signal?: AbortSignal): Promise<(() => void) | undefined> {
		if (signal?.aborted) return undefined;
		if (this.#active < this.limit) return this.#hold();
		return new Promise((resolve) => {
			const wake = () => {
				signal?.removeEventListener("abort", cancel);
				resolve(this.#hold());
			};
			const cancel = () => {
				const index = this.#waiting.indexOf(wake);
				if (index >= 0) this.#waiting.splice(index, 1);
				resolve(undefined);
			};
			this.#waiting.push(wake);
			signal?.addEventListener("abort", cancel, { once: true });
		});
	}

	#hold(): () => void {
		this.#active++;
		let released = false;
		return () => {
			if (released) return;
			released = true;
			this.#active--;
			const next = this.#waiting.shift();
			next?.();
		};
	}
}

/**
 * The `delegate_task` tool. Permission "read" and read-only as far as the loop is concerned: starting a child touches
 * nothing by itself, and every call the child makes passes the child's own permission gate (the parent's mode), so a
 * read-only role stays read-only and an executor is held to the same rules as the parent. Being read-only lets the
 * loop run several delegate_task calls of one message at once; the semaphore keeps at most `maxConcurrent` children
 * running, and children of a role that may write run one at a time (two executors never edit the same tree at once;
 * read-only children run alongside them). The result says the status, the rounds used, one line of the child's token use and the report (over
 * REPORT_INLINE_MAX_BYTES: its head and the spill file with the whole text); `details` carries the child session id,
 * the usage and `spillPath`. A failed child is a failed result (errorCode "child_failed"); a partial one is not.
 */
export function createDelegateTool(spawn: SpawnChild, options: DelegateToolOptions): Tool {
	const slots = new Semaphore(Math.max(1, Math.floor(options.maxConcurrent)));
	const writers = new Semaphore(1);
	return defineTool({
		name: "delegate_task",
		description: descriptionOf(options.roles(), options.maxConcurrent),
		parameters: z.object({
			task: z
				.string()
				.describe(
					"The child's whole brief: the goal, what it needs to know (paths, names, constraints) and what to report back. It sees nothing of this conversation.",
				),
			title: z.string().optional().describe("A few words naming the task (for the session list)"),
			agent: z.string().optional().describe(`The role (default ${DEFAULT_ROLE_NAME})`),
			tools: z
				.array(z.string())
				.optional()
				.describe("Only these tools (by name) for the child; default: the role's tools"),
			max_rounds: z
				.number()
				.int()
				.min(1)
				.max(MAX_CHILD_ROUNDS)
				.optional()
				.describe("The child's tool-round budget (default: the role's)"),
		}),
		permission: "read",
		readOnly: true,
		async run(args, context): Promise<ToolResult> {
			if (args.task.trim() === "")
				return failure("invalid_arguments", "delegate_task needs a task (the child's brief)");
			const roles = options.roles();
			const name = args.agent?.trim() || DEFAULT_ROLE_NAME;
			const role = roles.find((candidate) => candidate.name === name);
			if (!role) {
				return failure(
					"unknown_agent",
					`delegate_task: no agent "${name}"; the agents are: ${roles.map((known) => known.name).join(", ")}`,
				);
			}
			const request: ChildRequest = {
				task: args.task,
				role,
				maxRounds: args.max_rounds ?? role.maxRounds,
				...(args.title?.trim() ? { title: args.title.trim() } : {}),
				...(args.tools ? { tools: args.tools } : {}),
			};
			// a writer waits for the writer slot before it takes a general one, so waiting never blocks a reader
			const writing = role.readOnly ? undefined : await writers.acquire(context.signal);
			const release = role.readOnly || writing ? await slots.acquire(context.signal) : undefined;
			if (!release) {
				writing?.();
				return failure("aborted", "delegate_task: not started, the turn was aborted");
			}
			let report: ChildReport;
			try {
				report = await spawn(request, context.signal);
			} catch (error) {
				report = {
					status: "failed",
					report: "",
					rounds: 0,
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 },
					error: error instanceof Error ? error.message : String(error),
				};
			} finally {
				release();
				writing?.();
			}
			return resultOf(request, report, context.spillDir);
		},
	});
}

/** The tool result for a finished child. */
async function resultOf(request: ChildRequest, report: ChildReport, spillDir: string): Promise<ToolResult> {
	const label = `${request.role.name}${request.title ? ` "${request.title}"` : ""}`;
	const outcome =
		report.status === "done"
			? `done in ${report.rounds} of ${request.maxRounds} rounds`
			: report.status === "partial"
				? `partial: stopped at its budget of ${request.maxRounds} rounds and was asked once for its report`
				: `failed after ${report.rounds} rounds${report.error ? `: ${report.error}` : ""}`;
	const { usage } = report;
	const lines = [
		`delegate_task ${label}: ${outcome}`,
		`child session ${report.childSessionId ?? "(none)"}; tokens: input ${usage.input} (cache read ${usage.cacheRead}), output ${usage.output}, ${usage.requests} request${usage.requests === 1 ? "" : "s"}`,
		...(report.warnings ?? []).map((warning) => `warning: ${warning}`),
	];
	let spillPath: string | undefined;
	if (report.report === "") {
		lines.push("", "The child gave no report.");
	} else if (utf8Bytes(report.report) <= REPORT_INLINE_MAX_BYTES) {
		lines.push("", "Report:", report.report);
	} else {
		try {
			spillPath = await writeSpill(spillDir, report.report);
		} catch {
			spillPath = undefined;
		}
		if (spillPath) {
			lines.push(
				"",
				`Report (${report.report.length} characters; the whole text is in ${spillPath} — read_file it for the rest). First part:`,
				report.report.slice(0, REPORT_HEAD_CHARACTERS),
				`[… report continues in ${spillPath}]`,
			);
		} else lines.push("", "Report:", report.report);
	}
	const details: Record<string, unknown> = {
		agent: request.role.name,
		status: report.status,
		rounds: report.rounds,
		maxRounds: request.maxRounds,
		childSessionId: report.childSessionId,
		usage,
		...(report.error ? { error: report.error } : {}),
		...(spillPath ? { spillPath } : {}),
	};
	const content = lines.join("\n");
	const display = `${label}: ${report.status}, ${report.rounds} rounds, ${usage.input + usage.output} tokens`;
	return report.status === "failed"
		? { ok: false, errorCode: "child_failed", content, display, details }
		: { ok: true, content, display, details };
}

/** The tool's description: what delegation is for, then one line per role. */
function descriptionOf(roles: readonly RoleDefinition[], maxConcurrent: number): string {
	return [
		`Delegate a self-contained task to a child agent that starts with no history: give it a complete brief. It works with its own tools and round budget and answers with a report (its status and token use come with it). Call it several times in one message to run up to ${maxConcurrent} children at once; children that may write run one at a time, so two never change the same files at once.`,
		"Agents:",
		...roles.map((role) => `- ${role.name}: ${role.description}`),
	].join("\n");
}
