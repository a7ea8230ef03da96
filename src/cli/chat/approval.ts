import {
	type PermissionMode,
	permissionExplanation,
	permissionVerdict,
	summarizeArguments,
} from "../../agent/permissions.js";
import type { ToolCall } from "../../llm/types.js";
import type { Tool } from "../../tools/tool.js";

/** A person's answer to "run this call?": once, not at all, or this tool for the rest of the session. */
export type ApprovalAnswer = "yes" | "no" | "always";

/** What the approval prompt shows. */
export interface ApprovalRequest {
	tool: string;
	/** One line: the command, the path, or the compact arguments. */
	summary: string;
	/** The permission mode that asks. */
	mode: PermissionMode;
}

/**
 * The body of a stored `approval` decision: who allowed or refused which call.
 * scope: "once" (this call), "session" (the tool from now on, this session), "mode" (the permission mode decided
 * without asking: a plan-mode refusal, or a headless run where nobody can approve).
 */
export interface ApprovalBody extends Record<string, unknown> {
	tool: string;
	arguments: string;
	verdict: "allow" | "deny";
	scope: "once" | "session" | "mode";
	mode: PermissionMode;
}

export interface ApprovalGateOptions {
	/** The current permission mode (read at every call: /mode changes it between turns). */
	mode: () => PermissionMode;
	cwd: string;
	/** Asks a person; absent in headless runs and child agents, where a call that needs approval is refused. */
	ask?: (request: ApprovalRequest, signal?: AbortSignal) => Promise<ApprovalAnswer>;
	/** Without `ask`, whose refusal wording to use: "headless" (default, `snowpea run`) or "child" (a delegated agent). */
	unattended?: "headless" | "child";
	/** Records a decision in the session (the caller knows the round). Must not throw. */
	record: (body: ApprovalBody) => void;
	/** Tools the person already allowed for the whole session (restored from its stored decisions). */
	alwaysAllowed?: Iterable<string>;
}

/**
 * The loop's `approve` hook for one session: applies the permission mode, asks the person when the mode says so
 * (one question at a time, even when a round's calls run in parallel), remembers "always" per tool name, and
 * records every approval and refusal. Calls the mode allows outright are not recorded.
 */
export class ApprovalGate {
	readonly alwaysAllowed: Set<string>;
	private queue: Promise<unknown> = Promise.resolve();

	constructor(private readonly options: ApprovalGateOptions) {
		this.alwaysAllowed = new Set(options.alwaysAllowed ?? []);
	}

	/** The hook to pass as TurnOptions.approve. Never throws. */
	readonly approve = async (
		call: ToolCall,
		tool: Tool,
		signal?: AbortSignal,
	): Promise<{ allow: boolean; message?: string }> => {
		const mode = this.options.mode();
		const verdict = permissionVerdict(mode, tool, call.arguments, this.options.cwd);
		if (verdict === "allow") return { allow: true };
		const summary = summarizeArguments(tool, call.arguments);
		const body = (verdict: "allow" | "deny", scope: ApprovalBody["scope"]): ApprovalBody => ({
			tool: tool.name,
			arguments: summary,
			verdict,
			scope,
			mode,
		});
		const unattended = this.options.unattended ?? "headless";
		const refusal = (asked: boolean) =>
			permissionExplanation(mode, tool, call.arguments, this.options.cwd, {
				audience: asked ? "person" : unattended,
			});
		if (verdict === "deny") {
			this.note(body("deny", "mode"));
			return { allow: false, message: refusal(this.options.ask !== undefined) };
		}
		if (this.alwaysAllowed.has(tool.name)) return { allow: true };
		const ask = this.options.ask;
		if (!ask) {
			this.note(body("deny", "mode"));
			return { allow: false, message: refusal(false) };
		}
		const answer = await this.serialized(async () => {
			// an earlier answer in this round may have been "always"
			if (this.alwaysAllowed.has(tool.name)) return "already" as const;
			if (signal?.aborted) return "no" as const;
			try {
				return await ask({ tool: tool.name, summary, mode }, signal);
			} catch {
				return "no" as const;
			}
		});
		if (answer === "already") return { allow: true };
		// a call the person never answered because the turn stopped is not a refusal worth keeping
		if (signal?.aborted && answer !== "yes" && answer !== "always") {
			return { allow: false, message: "not run: the turn was stopped" };
		}
		if (answer === "always") {
			this.alwaysAllowed.add(tool.name);
			this.note(body("allow", "session"));
			return { allow: true };
		}
		this.note(body(answer === "yes" ? "allow" : "deny", "once"));
		return answer === "yes" ? { allow: true } : { allow: false, message: refusal(true) };
	};

	private note(body: ApprovalBody): void {
		try {
			this.options.record(body);
		} catch {
			// a decision that cannot be stored must not stop the call's answer
		}
	}

	private serialized<T>(work: () => Promise<T>): Promise<T> {
		const next = this.queue.then(work, work);
		this.queue = next.catch(() => undefined);
		return next;
	}
}

/** The tools a session's stored approval decisions allowed for the whole session. */
export function sessionApprovals(decisions: readonly { kind: string; body: Record<string, unknown> }[]): string[] {
	return decisions
		.filter(
			(decision) =>
				decision.kind === "approval" &&
				decision.body.scope === "session" &&
				decision.body.verdict === "allow" &&
				typeof decision.body.tool === "string",
		)
		.map((decision) => decision.body.tool as string);
}
