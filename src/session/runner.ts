import type { AgentEvent } from "../agent/events.js";
import { runTurn, type TurnOptions } from "../agent/loop.js";
import type { RepeatGuard } from "../agent/repeat-guard.js";
import type { Decision, Entry } from "../context/ledger.js";
import type { UserMessage } from "../llm/types.js";
import type { DetailedLog } from "./detailed-log.js";
import type { SessionInfo, SessionStore } from "./store.js";

export interface SessionTurnOptions extends Omit<TurnOptions, "history" | "firstRound" | "sessionId"> {
	store: SessionStore;
	session: SessionInfo;
	resumed: boolean;
	log?: DetailedLog;
}

export interface SessionState {
	/** The transcript, each message with its round. */
	entries: Entry[];
	/** The context engine's decisions so far (replacements and compaction checkpoints), oldest first. */
	ledger: Decision[];
	/** The round the next request gets. */
	nextRound: number;
	/** Deferred tools loaded in this session, in load order. */
	loadedTools: string[];
}

/** The stored decision kinds that make up the context ledger (others, like tool loads, are read separately). */
const LEDGER_KINDS: ReadonlySet<string> = new Set<Decision["kind"]>(["replace", "arguments", "checkpoint"]);

/** What a stored session needs to continue: its transcript, its next round and its ledger's tool loads. */
export function loadSessionState(store: SessionStore, sessionId: string): SessionState {
	const stored = store.messages(sessionId);
	const lastRound = stored.reduce((highest, entry) => Math.max(highest, entry.round), 0);
	const decisions = store.decisions(sessionId);
	const loadedTools = decisions
		.filter((decision) => decision.kind === "tool-load" && typeof decision.body.tool === "string")
		.map((decision) => decision.body.tool as string);
	// replacements and compaction checkpoints, in the order they were taken
	const ledger = decisions
		.filter((decision) => LEDGER_KINDS.has(decision.kind))
		.map((decision) => ({ ...decision.body, kind: decision.kind, round: decision.round }) as Decision);
	return {
		entries: stored.map((entry) => ({ message: entry.message, round: entry.round })),
		ledger,
		nextRound: lastRound + 1,
		loadedTools,
	};
}

/**
 * Runs one user turn of a stored session and records it as it happens: each message as soon as it joins the
 * transcript, each event (except streaming deltas) as it is yielded. A kill at any point loses nothing already
 * recorded; a call left without a result is answered when the next request is built.
 * Contract: yields `session.started` first and passes every agent event through.
 */
export async function* runSessionTurn(options: SessionTurnOptions): AsyncGenerator<AgentEvent> {
	const { store, session, log } = options;
	const { entries, nextRound } = loadSessionState(store, session.id);
	const started: AgentEvent = { type: "session.started", sessionId: session.id, resumed: options.resumed };
	store.appendEvent(session.id, started);
	yield started;
	if (!session.title) store.updateSession(session.id, { title: titleOf(options.input.content) });
	store.updateSession(session.id, { status: "running" });
	for await (const event of runTurn({ ...options, history: entries, firstRound: nextRound, sessionId: session.id })) {
		if (event.type === "message") {
			store.appendMessage(session.id, event.message, {
				round: event.round,
				fullText: event.fullText,
				fullPath: event.fullPath,
			});
		} else if (event.type === "decision") {
			store.appendDecision(session.id, { round: event.round, kind: event.kind, body: event.body });
		} else if (event.type !== "text.delta") {
			store.appendEvent(session.id, event);
		}
		if (event.type === "turn.done") {
			store.updateSession(session.id, { status: event.stopReason });
			saveGuardState(store, session.id, options.guard);
		}
		log?.observe(event);
		yield event;
	}
}

/** The guard's `changes` when its state was last stored, per guard (one guard per assembled session). */
const savedGuards = new WeakMap<RepeatGuard, number>();

/** Stores the guard's reads and scans when they may have changed since they were last stored. Never throws. */
function saveGuardState(store: SessionStore, sessionId: string, guard: RepeatGuard | undefined): void {
	if (!guard || savedGuards.get(guard) === guard.changes) return;
	try {
		store.appendEvent(sessionId, { type: "guard.state", state: guard.snapshot() });
		savedGuards.set(guard, guard.changes);
	} catch {
		// losing the guard's memory only costs a real re-read after a restart
	}
}

function titleOf(content: UserMessage["content"]): string {
	const text = content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
	const line = text.replace(/\s+/g, " ").trim();
	return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
