import { existsSync } from "node:fs";
import { join } from "node:path";
import { rebuildLastRequest } from "../agent/compactor.js";
import type { RequestFrame } from "../agent/context-pipeline.js";
import type { AgentEvent } from "../agent/events.js";
import { resolveImages } from "../agent/images.js";
import { measureMessages, measureSystem, measureTools } from "../agent/measure.js";
import type { Message } from "../llm/types.js";
import { type SessionInfo, SessionStore } from "../session/store.js";
import { assembleSession } from "./assemble.js";
import type { Output } from "./render.js";
import { EXIT, findSession, loadOrExplain } from "./run-command.js";
import { snowpeaHome } from "./settings.js";
import { UsageError } from "./usage-error.js";

function withStore<T>(action: (store: SessionStore) => T): T {
	const store = SessionStore.open(join(snowpeaHome(), "state.db"));
	try {
		return action(store);
	} finally {
		store.close();
	}
}

const when = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19);

/** `snowpea sessions list [--json]`: newest first. */
export function listSessions(flags: { json?: boolean }, output: Output): void {
	withStore((store) => {
		const sessions = store.listSessions({ limit: 200, parentId: null });
		if (flags.json) return output.out(`${JSON.stringify(sessions)}\n`);
		if (sessions.length === 0) return output.out('no sessions yet; start one with: snowpea run "<task>"\n');
		for (const session of sessions) {
			output.out(
				`${session.id}  ${when(session.updatedAt)}  ${session.status.padEnd(10)}  ${session.model}  ${session.title}\n`,
			);
		}
	});
}

/** `snowpea sessions show ID`: metadata, usage totals and the transcript in brief. */
export function showSession(id: string, output: Output): void {
	withStore((store) => {
		const session = findSession(store, id);
		const totals = store.usageTotals(session.id);
		output.out(header(session));
		output.out(
			`usage: ${totals.requests} requests, input ${totals.input} tokens (cache read ${totals.cacheRead}, cache write ${totals.cacheWrite}), output ${totals.output}\n\n`,
		);
		output.out(cacheSummary(store.events(session.id, { types: ["usage"] }).map((entry) => entry.event)));
		for (const entry of store.messages(session.id)) output.out(`[round ${entry.round}] ${brief(entry.message)}\n`);
	});
}

/** `snowpea sessions export ID --format jsonl|md`. jsonl is the normalized trajectory format `snowpea bench` reads. */
export function exportSession(id: string, format: string, output: Output): void {
	if (format !== "jsonl" && format !== "md") throw new UsageError(`--format must be jsonl or md, got "${format}"`);
	withStore((store) => {
		const session = findSession(store, id);
		const messages = store.messages(session.id).map((entry) => entry.message);
		if (format === "jsonl") {
			for (const message of messages) output.out(`${JSON.stringify(toTrajectoryLine(message))}\n`);
			return;
		}
		output.out(`# ${session.title || session.id}\n\n`);
		output.out(header(session).replace(/^/gm, "> "));
		for (const message of messages) output.out(`\n${markdown(message)}\n`);
	});
}

/** The cache attribution of every response: counts by kind, then each miss with its round and reason. */
function cacheSummary(events: readonly AgentEvent[]): string {
	const counts = new Map<string, number>();
	const misses: string[] = [];
	for (const event of events) {
		if (event.type !== "usage" || !event.cache) continue;
		const { kind, reused, because } = event.cache;
		counts.set(kind, (counts.get(kind) ?? 0) + 1);
		if (kind !== "hit") {
			const why = because ? ` — ${because.join(", ")}` : "";
			misses.push(`  round ${event.round}: ${kind.replace("_", " ")} (${Math.round(reused * 100)}% reused)${why}\n`);
		}
	}
	if (counts.size === 0) return "";
	const line = [...counts].map(([kind, count]) => `${count} ${kind.replace("_", " ")}`).join(", ");
	return `cache: ${line}\n${misses.join("")}\n`;
}

function header(session: SessionInfo): string {
	return `session ${session.id}\nmodel ${session.model}\ncwd ${session.cwd}\nstatus ${session.status}\ncreated ${when(session.createdAt)}, updated ${when(session.updatedAt)}\n`;
}

function textOf(message: Message): string {
	if (message.role === "assistant") return message.text;
	if (message.role === "tool") return message.content;
	return message.content
		.map((part) =>
			part.type === "text" ? part.text : part.type === "image-ref" ? part.marker : `[image ${part.mime}]`,
		)
		.join("\n");
}

function brief(message: Message): string {
	const text = textOf(message).replace(/\s+/g, " ").trim();
	const clipped = text.length > 100 ? `${text.slice(0, 99)}…` : text;
	if (message.role === "assistant") {
		const calls = message.toolCalls.map((call) => call.name).join(", ");
		return `assistant: ${clipped}${calls ? ` [calls: ${calls}]` : ""}`;
	}
	if (message.role === "tool") return `tool ${message.toolName}${message.isError ? " (error)" : ""}: ${clipped}`;
	return `user: ${clipped}`;
}

function toTrajectoryLine(message: Message): Record<string, unknown> {
	if (message.role === "assistant") {
		return {
			role: "assistant",
			content: message.text,
			...(message.toolCalls.length > 0
				? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })) }
				: {}),
		};
	}
	if (message.role === "tool")
		return { role: "tool", content: message.content, tool_call_id: message.toolCallId, name: message.toolName };
	return { role: "user", content: textOf(message) };
}

function markdown(message: Message): string {
	if (message.role === "user") return `## User\n\n${textOf(message)}`;
	if (message.role === "tool") {
		return `### Result of ${message.toolName}${message.isError ? " (error)" : ""}\n\n\`\`\`\n${message.content}\n\`\`\``;
	}
	const calls = message.toolCalls.map((call) => `- \`${call.name}\` \`${call.arguments}\``).join("\n");
	return `## Assistant\n\n${message.text}${calls ? `\n\nCalls:\n${calls}` : ""}`;
}

/**
 * `snowpea sessions compact ID`: takes a compaction checkpoint now, as `/compact` does in chat. The summary request
 * replays the session's last request, rebuilt from the transcript and the ledger (the same bytes it had), so it is
 * served from the provider's cache; the checkpoint is stored with the session and its next turn starts from it.
 * Prints the estimated prompt tokens before → after. Exit 0 when a checkpoint was stored, 1 when there was nothing
 * to compact, 130 when interrupted.
 */
export async function compactSession(id: string, output: Output): Promise<number> {
	const home = snowpeaHome();
	const store = SessionStore.open(join(home, "state.db"));
	try {
		const session = findSession(store, id);
		const cwd = existsSync(session.cwd) ? session.cwd : process.cwd();
		const { settings, warnings } = loadOrExplain(cwd);
		for (const warning of warnings) output.log(`warning: ${warning}\n`);
		const assembled = await assembleSession({ store, session, settings, modelId: session.model, cwd, home });
		const controller = new AbortController();
		const stop = () => controller.abort();
		process.once("SIGINT", stop);
		try {
			for (const warning of assembled.warnings) output.log(`warning: ${warning}\n`);
			const { context, state, toolset, system } = assembled;
			const definitions = toolset.definitions();
			const fixedTokens = measureSystem(system).tokens + measureTools(definitions).tokens;
			const images = { vision: assembled.model.vision, maxImages: settings.agent.maxImagesPerRequest };
			const frame: RequestFrame = {
				fixedTokens,
				tools: Object.fromEntries(toolset.all.map((tool) => [tool.name, { readOnly: tool.readOnly }])),
				system,
				definitions,
				resolve: (messages) => resolveImages(messages, images),
			};
			// estimates calibrated by the session's last real usage, against its last request rebuilt
			const usage = store.latestEvent(session.id, "usage")?.event;
			const last = rebuildLastRequest(state.entries, context.decisions, { system, tools: definitions });
			if (usage?.type === "usage" && last)
				context.calibrate(fixedTokens + measureMessages(last.messages).tokens, usage.usage);

			const { compacted, events } = await context.compact({
				provider: assembled.provider,
				entries: state.entries,
				round: state.nextRound,
				frame,
				trigger: "manual",
				signal: controller.signal,
				sessionId: session.id,
			});
			for (const event of events) {
				if (event.type === "decision")
					store.appendDecision(session.id, { round: event.round, kind: event.kind, body: event.body });
				else store.appendEvent(session.id, event);
				if (event.type === "warning") output.log(`warning: ${event.message}\n`);
				if (event.type === "compaction") {
					output.out(
						`compacted session ${session.id}: ${event.tokensBefore} → ${event.tokensAfter} tokens (${event.source})\n`,
					);
				}
			}
			if (controller.signal.aborted) return EXIT.interrupted;
			return compacted ? EXIT.done : EXIT.stopped;
		} finally {
			process.off("SIGINT", stop);
			await assembled.close();
		}
	} finally {
		store.close();
	}
}
