import type { ChildReport, ChildRequest, ChildUsage, SpawnChild } from "../agent/delegate.js";
import type { TurnStopReason } from "../agent/events.js";
import { userText } from "../agent/loop.js";
import type { PermissionMode } from "../agent/permissions.js";
import { budgetLine } from "../agent/roles.js";
import type { UserMessage } from "../llm/types.js";
import { runSessionTurn } from "../session/runner.js";
import type { SessionInfo, SessionStore } from "../session/store.js";
import type { Tool } from "../tools/tool.js";
import { Toolset } from "../tools/toolset.js";
import type { AssembledSession, AssembleInput } from "./assemble.js";
import { ApprovalGate } from "./chat/approval.js";
import type { Settings } from "./settings.js";

/** The message a child gets when its round budget is spent; its answer (with no tools offered) is its report. */
export const BUDGET_SPENT_MESSAGE =
	"Your round budget is spent: write your report now. Say what you found or changed, and what is left undone.";

export interface ChildSpawnerInput {
	store: SessionStore;
	/** The delegating session: the children's parentId. */
	parent: SessionInfo;
	settings: Settings;
	modelId: string;
	cwd: string;
	home: string;
	/** The parent's prompt date: every child gets the same, so their prompts stay byte-identical. */
	date: string;
	/** The mode each child's calls are checked against (a call that would ask is refused: a child cannot ask). */
	permissionMode: () => PermissionMode;
	/** assembleSession (passed in, so this module does not import its own caller). */
	assemble: (input: AssembleInput) => Promise<AssembledSession>;
	/** The parent's connected MCP tools, read when a child starts: children share the parent's servers. */
	mcpTools?: () => readonly Tool[];
}

/**
 * The `spawn` behind a session's delegate_task. Each child:
 * 1. is stored as a new session with `parentId` = the parent (title: the call's, else its brief's first words;
 *    meta: role and budget), so `sessions list` keeps it out of the top-level list;
 * 2. is assembled as a child (`agents.childContext` decides lean or full; the parent's MCP servers, not new ones)
 *    and runs one turn whose input is the brief
 *    followed by the budget line, with `maxToolRounds` = the budget; its calls pass an approval gate in the parent's
 *    permission mode, with nobody to ask;
 * 3. stopped at its budget, is asked once more — with no tools offered — for its report: status "partial";
 *    a provider error, an abort or a failed assembly gives "failed" with the reason; otherwise "done".
 * The report is the child's last non-empty answer; usage is the child session's stored totals. Never rejects.
 */
export function createChildSpawner(input: ChildSpawnerInput): SpawnChild {
	const { store, parent, settings, modelId, cwd, home, date } = input;
	return async (request, signal) => {
		let child: SessionInfo;
		try {
			child = store.createSession({
				cwd,
				model: modelId,
				parentId: parent.id,
				...(request.title ? { title: request.title } : {}),
				meta: { role: request.role.name, maxRounds: request.maxRounds },
			});
		} catch (error) {
			return failed(`could not store the child session: ${messageOf(error)}`);
		}
		let assembled: AssembledSession | undefined;
		try {
			assembled = await input.assemble({
				store,
				session: child,
				settings,
				modelId,
				cwd,
				home,
				date,
				child: {
					role: request.role,
					lean: settings.agents.childContext === "lean",
					...(request.tools ? { tools: request.tools } : {}),
				},
				...(input.mcpTools ? { mcpTools: input.mcpTools() } : {}),
			});
			return await runChild(input, child, assembled, request, signal);
		} catch (error) {
			return { ...failed(messageOf(error)), childSessionId: child.id, usage: usageOf(store, child.id) };
		} finally {
			await assembled?.close();
		}
	};
}

/** Runs an assembled child to its report. */
async function runChild(
	input: ChildSpawnerInput,
	child: SessionInfo,
	assembled: AssembledSession,
	request: ChildRequest,
	signal: AbortSignal,
): Promise<ChildReport> {
	const { store, settings } = input;
	let round = 0;
	const gate = new ApprovalGate({
		mode: input.permissionMode,
		cwd: input.cwd,
		unattended: "child",
		record: (body) => store.appendDecision(child.id, { round, kind: "approval", body }),
	});
	// A child ends with its budget: at most maxToolRounds requests, then the one report request it may be asked for.
	const turn = async (
		message: UserMessage,
		toolset: Toolset,
		maxToolRounds: number,
		resumed: boolean,
		requestsAfterTurn: number,
	) => {
		let stopReason: TurnStopReason = "error";
		let rounds = 0;
		let error: string | undefined;
		for await (const event of runSessionTurn({
			store,
			session: child,
			resumed,
			...assembled.turnOptions(),
			toolset,
			approve: gate.approve,
			input: message,
			maxToolRounds,
			requestsAfterTurn,
			signal,
		})) {
			if (event.type === "context") round = event.report.round;
			else if (event.type === "error") error = event.message;
			else if (event.type === "turn.done") {
				stopReason = event.stopReason;
				rounds = event.rounds;
			}
		}
		return { stopReason, rounds, error };
	};

	const brief = userText(`${request.task}\n\n${budgetLine(request.maxRounds)}`);
	const main = await turn(brief, assembled.toolset, request.maxRounds, false, 1);
	const finish = (status: ChildReport["status"], error?: string): ChildReport => ({
		status,
		report: lastAnswer(store, child.id),
		rounds: main.rounds,
		usage: usageOf(store, child.id),
		childSessionId: child.id,
		...(error ? { error } : {}),
		...(assembled.warnings.length > 0 ? { warnings: assembled.warnings } : {}),
	});
	switch (main.stopReason) {
		case "done":
			return finish("done");
		case "length":
			return finish("partial", "the child's last answer was cut at the output limit");
		case "max_rounds": {
			// One request with no tools offered: the model can only answer, and that answer is the report.
			const noTools = new Toolset([], { deferred: settings.tools.deferred, eager: [] });
			const asked = await turn(userText(BUDGET_SPENT_MESSAGE), noTools, 1, true, 0);
			if (asked.stopReason === "done" || asked.stopReason === "length") return finish("partial");
			return finish("failed", `asked for its report after the budget: ${asked.error ?? asked.stopReason}`);
		}
		case "aborted":
			return finish("failed", "aborted");
		default:
			return finish("failed", main.error ?? `the child stopped: ${main.stopReason}`);
	}
}

/** The child's last non-empty answer, "" when it gave none. */
function lastAnswer(store: SessionStore, sessionId: string): string {
	const messages = store.messages(sessionId);
	for (let index = messages.length - 1; index >= 0; index--) {
		const { message } = messages[index] as (typeof messages)[number];
		if (message.role === "assistant" && message.text.trim() !== "") return message.text;
	}
	return "";
}

function usageOf(store: SessionStore, sessionId: string): ChildUsage {
	try {
		return store.usageTotals(sessionId);
	} catch {
		return emptyUsage();
	}
}

function failed(error: string): ChildReport {
	return { status: "failed", report: "", rounds: 0, usage: emptyUsage(), error };
}

function emptyUsage(): ChildUsage {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 };
}

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
