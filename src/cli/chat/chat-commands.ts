import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "../../agent/permissions.js";
import { priceSheetFor } from "../../context/cost.js";
import { loadSessionState } from "../../session/runner.js";
import type { SessionInfo } from "../../session/store.js";
import { providerFor } from "../assemble.js";
import { findSession } from "../run-command.js";
import type { ChatSession } from "./chat-session.js";
import { contextBreakdown, formatContextBreakdown } from "./context-breakdown.js";
import { formatCostTable } from "./cost-table.js";
import { helpText } from "./slash-commands.js";
import { formatTokens } from "./status-line.js";

/** What each mode means, for /mode. */
const MODE_SUMMARY: Record<PermissionMode, string> = {
	plan: "read and network tools only; writes only to *.md, *.txt and .snowpea/plans/**",
	accept: "shell, network and writes outside the working directory ask first",
	auto: "every call runs without asking",
};

/**
 * Runs one slash command (already parsed and known) against the chat. Returns false when the session should end.
 * Contract: never throws; problems are shown as one line.
 */
export async function runChatCommand(chat: ChatSession, name: string, args: string): Promise<boolean> {
	try {
		return await dispatch(chat, name, args);
	} catch (error) {
		chat.say(chat.style.red(`/${name}: ${error instanceof Error ? error.message : String(error)}`));
		return true;
	}
}

async function dispatch(chat: ChatSession, name: string, args: string): Promise<boolean> {
	const open = chat.session;
	switch (name) {
		case "quit":
			return false;
		case "help":
			chat.say(helpText());
			return true;
		case "tools":
			chat.say(toolsText(chat));
			return true;
		case "attach":
			if (args === "") chat.say("usage: /attach <path>");
			else await chat.attach(args.replace(/^@/, "").replace(/^"(.*)"$/, "$1"));
			return true;
		case "expand": {
			const number = args === "" ? undefined : Number(args.replace(/^#/, ""));
			if (number !== undefined && (!Number.isInteger(number) || number < 1)) {
				chat.say("usage: /expand [N] — N is the number shown in [N] before a tool call");
			} else chat.say(open.renderer.expand(number));
			return true;
		}
		case "compact":
			await chat.compactNow();
			return true;
		case "cost":
			chat.say(
				open.stored
					? formatCostTable(chat.costRows(), priceSheetFor(open.assembled.model, open.assembled.modelId).name)
					: "no requests yet in this session",
			);
			return true;
		case "context": {
			const { assembled } = open;
			const state = loadSessionState(chat.store, open.info.id);
			const parts = contextBreakdown({
				system: assembled.systemNow(),
				projectInstructions: assembled.contextFiles.block(),
				tools: assembled.toolset.definitions(),
				entries: state.entries,
				ledger: assembled.context.decisions,
				round: state.nextRound,
			});
			chat.say(formatContextBreakdown(parts, assembled.model.contextWindow));
			return true;
		}
		case "model":
			await switchModel(chat, args);
			return true;
		case "mode":
			if (!isPermissionMode(args)) {
				chat.say(`mode ${chat.mode} (${MODE_SUMMARY[chat.mode]}); usage: /mode ${PERMISSION_MODES.join("|")}`);
			} else {
				chat.mode = args;
				chat.say(`mode ${args}: ${MODE_SUMMARY[args]}`);
			}
			return true;
		case "sessions":
			chat.say(sessionsText(chat));
			return true;
		case "resume": {
			if (args === "") {
				chat.say("usage: /resume <id> — /sessions lists them");
				return true;
			}
			const found = findSession(chat.store, args);
			if (found.id === open.info.id) {
				chat.say(`session ${found.id} is already open`);
				return true;
			}
			if (await chat.tryOpen(found)) chat.describeOpened();
			return true;
		}
		case "new":
			if (await chat.tryOpen(undefined, open.assembled.modelId)) chat.describeOpened();
			return true;
		default:
			chat.say(`/${name} is not implemented`);
			return true;
	}
}

/** /model <provider:model>: the open session continues with another model (its next request is not cached). */
async function switchModel(chat: ChatSession, modelId: string): Promise<void> {
	const open = chat.session;
	if (modelId === "") {
		chat.say(
			`model ${open.assembled.modelId}; usage: /model <provider:model>, e.g. /model anthropic:claude-sonnet-4-5`,
		);
		return;
	}
	providerFor(modelId, chat.settings);
	const info: SessionInfo = { ...open.info, model: modelId };
	if (!(await chat.tryOpen(open.stored ? info : undefined, modelId))) return;
	if (open.stored) chat.store.updateSession(info.id, { model: modelId });
	const model = chat.session.assembled.model;
	chat.say(
		`model ${modelId} (window ${formatTokens(model.contextWindow)} tokens, vision ${model.vision ? "yes" : "no"})`,
	);
}

function toolsText(chat: ChatSession): string {
	const { toolset } = chat.session.assembled;
	const loaded = new Set(toolset.loaded);
	const eager = toolset.sent().filter((tool) => !loaded.has(tool.name));
	const groups = new Map<string, number>();
	for (const tool of toolset.waiting()) {
		const group = tool.group ?? tool.name;
		groups.set(group, (groups.get(group) ?? 0) + 1);
	}
	const list = (names: string[]) => (names.length === 0 ? "none" : names.join(", "));
	return [
		`eager (${eager.length}): ${list(eager.map((tool) => `${tool.name} [${tool.permission}]`))}`,
		`loaded (${loaded.size}): ${list([...loaded])}`,
		`deferred, loaded on demand by tool_search (${groups.size} groups): ${list(
			[...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([group, count]) => `${group} (${count})`),
		)}`,
	].join("\n");
}

function sessionsText(chat: ChatSession): string {
	const sessions = chat.store.listSessions({ limit: 15, parentId: null });
	if (sessions.length === 0) return "no stored sessions yet";
	const when = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16);
	const openId = chat.session.info.id;
	return sessions
		.map(
			(session) =>
				`${session.id === openId ? "*" : " "} ${session.id.slice(0, 8)}  ${when(session.updatedAt)}  ${session.status.padEnd(9)}  ${session.model}  ${session.title}`,
		)
		.concat("/resume <id> continues one (a unique prefix is enough)")
		.join("\n");
}
