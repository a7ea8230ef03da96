import type { Message, ProviderError, StopReason, Usage } from "../llm/types.js";

/** Bytes and estimated tokens of one part of a request. */
export interface PartSize {
	bytes: number;
	tokens: number;
}

/** What one request carried, by part. */
export interface ContextReport {
	round: number;
	system: PartSize;
	tools: PartSize;
	messages: PartSize;
	toolResults: PartSize;
	total: PartSize;
}

/**
 * Events the agent loop yields, in order. Consumed by the CLI renderers and the session store.
 * Names are noun.verb; every event is plain JSON.
 */
export type AgentEvent =
	| { type: "session.started"; sessionId: string; resumed: boolean }
	| { type: "turn.started"; round: number }
	/**
	 * A message joined the transcript (the prompt, an answer, a tool result). The session store persists it;
	 * `fullText`/`fullPath` hold a tool's complete output when the model-facing content was capped.
	 */
	| { type: "message"; round: number; message: Message; fullText?: string; fullPath?: string }
	| { type: "text.delta"; text: string }
	| { type: "tool.call"; id: string; name: string; arguments: string }
	| {
			type: "tool.result";
			id: string;
			name: string;
			ok: boolean;
			output: string;
			display?: string;
			errorCode?: string;
	  }
	| { type: "usage"; round: number; usage: Usage }
	| { type: "context"; report: ContextReport }
	| { type: "retry"; attempt: number; delayMs: number; reason: string }
	/** A decision the session must remember (stored in its ledger): e.g. a deferred tool loaded for the session. */
	| { type: "decision"; round: number; kind: string; body: Record<string, unknown> }
	| { type: "loop.suspected"; tool: string; count: number }
	/** A context-engine pass replaced stale tool output before this round's request. */
	| {
			type: "elision";
			round: number;
			kind: string;
			count: number;
			reclaimedBytes: number;
			toolResultBytesAfter: number;
			/** "auto" only: ΔT, S, R, warm probability, expected saving and batch size it was priced with. */
			reason?: Record<string, number | boolean>;
	  }
	| { type: "warning"; message: string }
	| { type: "turn.done"; stopReason: TurnStopReason; rounds: number }
	| { type: "error"; message: string; kind?: ProviderError["kind"] };

/** Why a whole turn (one user prompt) ended. */
export type TurnStopReason = "done" | "max_rounds" | "aborted" | "error" | StopReason;
