import type { Message, ProviderError, StopReason, Usage } from "../llm/types.js";
import type { CacheAttribution } from "./cache-attribution.js";
import type { GuardState } from "./repeat-guard.js";

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
	/** A response's token use, and (with a price sheet known) why it read what it read from the cache. */
	| { type: "usage"; round: number; usage: Usage; cache?: CacheAttribution }
	| { type: "context"; report: ContextReport }
	| { type: "retry"; attempt: number; delayMs: number; reason: string }
	/** A decision the session must remember (stored in its ledger): e.g. a deferred tool loaded for the session. */
	| { type: "decision"; round: number; kind: string; body: Record<string, unknown> }
	| { type: "loop.suspected"; tool: string; count: number }
	/** The repeat guard's reads and scans at the end of a turn, kept so a resumed session still stubs re-reads. */
	| { type: "guard.state"; state: GuardState }
	/** A context-engine pass replaced stale tool output before this round's request. */
	| {
			type: "elision";
			round: number;
			kind: string;
			/** Results replaced. */
			count: number;
			/** Assistant messages whose long call arguments were elided (their calls' results are stale). */
			argumentMessages: number;
			/** Bytes the request got smaller by: results and arguments. */
			reclaimedBytes: number;
			toolResultBytesAfter: number;
			/** "auto" only: ΔT, S, R, warm probability, expected saving and batch size it was priced with. */
			reason?: Record<string, number | boolean>;
	  }
	/**
	 * A compaction checkpoint was taken before this round's request (its `decision` event carries the checkpoint).
	 * Tokens are estimates calibrated by the last real usage; `usage` is the summary call's own, when one was made.
	 */
	| {
			type: "compaction";
			round: number;
			/** "summary": the model wrote it; "digest": the mechanical stand-in. */
			source: "summary" | "digest";
			/** What started it: the prompt reached compactRatio × window, the provider said the prompt is too long, or a person asked. */
			trigger: "size" | "context_length" | "manual";
			tokensBefore: number;
			tokensAfter: number;
			usage?: Usage;
	  }
	| { type: "warning"; message: string }
	| { type: "turn.done"; stopReason: TurnStopReason; rounds: number }
	| { type: "error"; message: string; kind?: ProviderError["kind"] };

/** Why a whole turn (one user prompt) ended. */
export type TurnStopReason = "done" | "max_rounds" | "aborted" | "error" | StopReason;
