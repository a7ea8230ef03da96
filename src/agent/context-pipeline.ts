import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { argumentsSpillText, bareArguments, elideArguments } from "../context/arguments.js";
import { PRICE_SHEETS, type PriceSheet } from "../context/cost.js";
import { runPolicy } from "../context/engine.js";
import {
	type Decision,
	type Entry,
	type PassDecision,
	type ReplaceDecision,
	spillsToWrite,
} from "../context/ledger.js";
import { barePlaceholder } from "../context/placeholders.js";
import { activeCheckpoint, project } from "../context/project.js";
import type { ContextSettings } from "../context/settings.js";
import type { SnipTool } from "../context/snip.js";
import type { Message, ModelRequest, Provider, SystemSegment, ToolDefinition, Usage } from "../llm/types.js";
import { attributeCache, type CacheAttribution } from "./cache-attribution.js";
import { type CompactionTrigger, compact, rebuildLastRequest } from "./compactor.js";
import type { AgentEvent } from "./events.js";
import { measureMessages } from "./measure.js";

/** What the pipeline adds to each request: the fixed parts the context engine does not rewrite. */
export interface RequestFrame {
	/** Estimated tokens of the system prompt and tool definitions. */
	fixedTokens: number;
	tools: Record<string, SnipTool>;
	/** The system prompt and tool definitions sent with the messages: with both, the pipeline keeps the request. */
	system?: SystemSegment[];
	definitions?: ToolDefinition[];
	/** Turns projected messages into the ones sent (image references resolved); the identity when absent. */
	resolve?: (messages: Message[]) => Message[];
	/** The most requests the session can make after this one, when its end is known (see Economy). */
	futureRequestsAtMost?: number;
}

/**
 * The agent's side of the context engine for one session: it keeps the ledger, asks the policy for new decisions
 * before every request, writes their spill files (0600 files in a 0700 directory, named by ledger position only),
 * and projects the request. The engine itself (src/context) stays pure; all I/O is here.
 * Contract: never throws; a spill write that fails turns that decision into a bare placeholder with one `warning`
 * event per session; decisions are announced as `decision` events (the store persists them) before the request is sent.
 */
export class ContextPipeline {
	private readonly ledger: Decision[];
	private readonly replacedCalls = new Set<string>();
	private spillWarned = false;
	/** Provider tokens per estimated token, from the last response (1 until a response arrives). */
	private calibration = 1;
	private lastEstimate = 0;

	private readonly warnings: string[] = [];

	private lastSentAt: number | undefined;

	/** The request of the latest build and of the latest answered request (frames with system and definitions). */
	private lastBuilt: { request: ModelRequest; resolve?: (messages: Message[]) => Message[] } | undefined;
	private lastAnswered: { request: ModelRequest; resolve?: (messages: Message[]) => Message[] } | undefined;
	/** Compactions in a row that left the prompt at or above the trigger. */
	private fruitless = 0;
	/** The stuck latch: set after two fruitless compactions, cleared when the prompt falls below the trigger. */
	private stuck = false;
	/** Calls whose results a checkpoint folded away, for the next build's `forgotten`. */
	private folded: string[] = [];
	/** Rounds already sent again after a context-length compaction. */
	private readonly retried = new Set<number>();
	/** The previous response's prompt size and the system/tools objects its request carried. */
	private previous: { promptTokens: number; system: object; tools: object } | undefined;
	/** Seconds between the previous request and the one being attributed. */
	private previousIdle = 0;
	/** What this pass changed in the prefix, for the next attribution. */
	private changes: string[] = [];

	constructor(
		readonly settings: ContextSettings,
		ledger: readonly Decision[] = [],
		/** The provider's prices and cache behaviour, for "auto". */
		private readonly sheet: PriceSheet = PRICE_SHEETS.anthropic,
		/** Seconds since the epoch; injectable for tests. */
		private readonly now: () => number = () => Date.now() / 1000,
		/** When this session's previous request was sent (seconds since the epoch), for a resumed session. */
		lastSentAt?: number,
	) {
		this.ledger = [...ledger];
		this.lastSentAt = lastSentAt;
	}

	/** The decisions taken so far, oldest first. */
	get decisions(): readonly Decision[] {
		return this.ledger;
	}

	/** True while the result of `callId` reaches the model verbatim (the repeat guard stubs only those). */
	isVisible(callId: string): boolean {
		return !this.replacedCalls.has(callId);
	}

	/** Remembers which calls' results were replaced, from the ledger and the transcript. */
	private noteReplaced(entries: readonly Entry[], decisions: readonly PassDecision[]): string[] {
		const ids: string[] = [];
		for (const decision of decisions) {
			if (decision.kind !== "replace") continue;
			const message = entries[decision.entry]?.message;
			if (message?.role !== "tool") continue;
			this.replacedCalls.add(message.toolCallId);
			ids.push(message.toolCallId);
		}
		return ids;
	}

	/** Rebuilds what is visible after a resume: every replace decision and checkpoint already in the ledger. */
	restore(entries: readonly Entry[]): void {
		this.noteReplaced(
			entries,
			this.ledger.filter((decision): decision is ReplaceDecision => decision.kind === "replace"),
		);
		this.noteFolded(entries);
		this.folded = [];
	}

	/** Remembers the calls whose results the newest checkpoint folded away; returns the ones new to the set. */
	private noteFolded(entries: readonly Entry[]): string[] {
		const round = Math.max(0, ...this.ledger.map((decision) => decision.round));
		const checkpoint = activeCheckpoint(entries, this.ledger, round);
		const ids: string[] = [];
		for (const entry of entries.slice(0, checkpoint?.firstKept ?? 0)) {
			const message = entry.message;
			if (message.role !== "tool" || this.replacedCalls.has(message.toolCallId)) continue;
			this.replacedCalls.add(message.toolCallId);
			ids.push(message.toolCallId);
		}
		return ids;
	}

	/** The prompt tokens at which compaction starts: compactRatio × contextWindow; 0 (never) when the window is unknown. */
	get compactTrigger(): number {
		const { compactRatio, contextWindow } = this.settings;
		return contextWindow > 0 ? compactRatio * contextWindow : 0;
	}

	/** The last request the provider answered, as sent (images resolved); undefined before the first answer. */
	get lastRequest(): ModelRequest | undefined {
		const last = this.lastAnswered;
		if (!last) return undefined;
		return last.resolve ? { ...last.request, messages: last.resolve(last.request.messages) } : last.request;
	}

	/** Estimated prompt tokens of the request for `round` before this round's policy pass, calibrated by the last usage. */
	estimatePrompt(entries: readonly Entry[], round: number, fixedTokens: number): number {
		return Math.round((fixedTokens + measureMessages(project(entries, this.ledger, round)).tokens) * this.calibration);
	}

	/**
	 * True when a request of `promptTokens` has reached the compaction trigger and the stuck latch is not set. A prompt
	 * below the trigger clears the latch. Always false when the window is unknown.
	 */
	needsCompaction(promptTokens: number): boolean {
		const trigger = this.compactTrigger;
		if (trigger <= 0) return false;
		if (promptTokens < trigger) {
			this.stuck = false;
			this.fruitless = 0;
			return false;
		}
		return !this.stuck;
	}

	/**
	 * True the first time it is asked for `round`: a round that hit a context-length error is compacted and sent
	 * again once, never twice.
	 */
	claimRetry(round: number): boolean {
		if (this.retried.has(round)) return false;
		this.retried.add(round);
		return true;
	}

	/**
	 * Takes a compaction checkpoint before the request for `round` (src/agent/compactor.ts): the summary request
	 * replays the last answered request (or, in a session that sent none yet, the one rebuilt from the transcript
	 * with `frame`'s system and definitions). The checkpoint joins the ledger and is announced by a `decision` event;
	 * a `compaction` event follows. Two automatic compactions in a row that leave the prompt at or above the trigger
	 * set the stuck latch with one `warning`; automatic compactions then stop (`needsCompaction`) until the prompt
	 * falls below the trigger. `compacted` is false when there was nothing to fold (nothing changes; a manual request
	 * gets a `warning`) or the signal aborted the summary call. Never throws.
	 */
	async compact(input: {
		provider: Provider;
		entries: readonly Entry[];
		round: number;
		frame: RequestFrame;
		trigger: CompactionTrigger;
		signal?: AbortSignal;
		sessionId?: string;
	}): Promise<{ compacted: boolean; events: AgentEvent[] }> {
		const { entries, round, frame } = input;
		const calibrated = (messages: Message[]) =>
			Math.round((frame.fixedTokens + measureMessages(messages).tokens) * this.calibration);
		const rebuilt =
			frame.system && frame.definitions
				? rebuildLastRequest(entries, this.ledger, { system: frame.system, tools: frame.definitions })
				: undefined;
		const lastRequest =
			this.lastRequest ??
			(rebuilt && frame.resolve ? { ...rebuilt, messages: frame.resolve(rebuilt.messages) } : rebuilt);
		const result = await compact({
			provider: input.provider,
			lastRequest,
			entries,
			ledger: this.ledger,
			round,
			settings: this.settings,
			trigger: input.trigger,
			tokensBefore: calibrated(project(entries, this.ledger, round)),
			measure: calibrated,
			signal: input.signal,
			sessionId: input.sessionId,
		});
		const events: AgentEvent[] = result ? [...result.events] : [];
		if (result) {
			this.ledger.push(result.decision);
			this.folded.push(...this.noteFolded(entries));
			this.changes.push(`compaction checkpoint (${result.decision.source})`);
		} else if (input.trigger === "manual" && !input.signal?.aborted) {
			events.push({ type: "warning", message: "compaction: nothing to compact yet" });
		}

		if (!result) return { compacted: false, events };
		const trigger = this.compactTrigger;
		const relieved = trigger <= 0 || result.decision.tokensAfter < trigger;
		this.fruitless = relieved ? 0 : this.fruitless + 1;
		if (this.fruitless >= 2 && !this.stuck && input.trigger !== "manual") {
			this.stuck = true;
			events.push({
				type: "warning",
				message: `compaction brings no relief: the prompt stays at or above ${Math.round(trigger)} tokens (context.compactRatio ${this.settings.compactRatio} × a ${this.settings.contextWindow}-token window); no more automatic compactions until it falls below`,
			});
		}
		return { compacted: true, events };
	}

	/**
	 * Attributes a response's cache figures (hit, cold start, TTL expiry, or the prefix changes snowpea made since
	 * the previous request, named). Call once per response, with the system prompt and tools that request carried.
	 */
	attribute(usage: Usage, system: object, tools: object): CacheAttribution {
		const changes = [...this.changes];
		if (this.previous && this.previous.system !== system) changes.push("system prompt changed");
		if (this.previous && this.previous.tools !== tools) changes.push("tool list changed (a deferred tool was loaded)");
		const attribution = attributeCache({
			usage,
			previousPromptTokens: this.previous?.promptTokens,
			idleSeconds: this.previous ? this.previousIdle : 0,
			ttlSeconds: this.sheet.ttlSeconds,
			changes,
		});
		this.previous = { promptTokens: usage.input, system, tools };
		this.changes = [];
		return attribution;
	}

	/** Calibrates token estimates with the provider's real count for the last request. */
	observeUsage(usage: Usage): void {
		this.lastAnswered = this.lastBuilt;
		this.calibrate(this.lastEstimate, usage);
	}

	/**
	 * Calibrates token estimates from a request estimated at `estimatedTokens` that the provider counted in `usage`
	 * (for a resumed session: its stored last usage and its rebuilt last request). Ratios outside 0.25–4 are ignored.
	 */
	calibrate(estimatedTokens: number, usage: Usage): void {
		if (estimatedTokens > 0 && usage.input > 0) {
			const ratio = usage.input / estimatedTokens;
			if (ratio > 0.25 && ratio < 4) this.calibration = ratio;
		}
	}

	/**
	 * The messages of the request for `round`, after the policy's new decisions (if any).
	 * `forgotten` lists the calls whose results this pass replaced or a checkpoint since the last build folded away
	 * (for the repeat guard). With `frame.system` and `frame.definitions`, the request is kept for compaction.
	 */
	build(
		entries: readonly Entry[],
		round: number,
		frame: RequestFrame,
	): { messages: Message[]; events: AgentEvent[]; forgotten: string[] } {
		const events: AgentEvent[] = [];
		const before = project(entries, this.ledger, round);
		const estimate = frame.fixedTokens + measureMessages(before).tokens;
		const promptTokens = Math.round(estimate * this.calibration);
		const { decisions, report } = runPolicy({
			entries: entries as Entry[],
			ledger: this.ledger,
			round,
			settings: this.settings,
			promptTokens,
			tools: frame.tools,
			economy: {
				sheet: this.sheet,
				idleSeconds: this.lastSentAt === undefined ? 0 : this.now() - this.lastSentAt,
				prefixChanged: this.prefixChanges(frame),
				...(frame.futureRequestsAtMost === undefined ? {} : { futureRequestsAtMost: frame.futureRequestsAtMost }),
			},
		});
		this.previousIdle = this.lastSentAt === undefined ? 0 : this.now() - this.lastSentAt;
		let forgotten: string[] = this.folded.splice(0);
		let messages = before;
		if (decisions.length > 0) {
			const kept = this.writeSpills(entries, decisions);
			this.ledger.push(...kept);
			forgotten = [...forgotten, ...this.noteReplaced(entries, kept)];
			for (const decision of kept) {
				const { kind, round: decided, ...body } = decision;
				events.push({ type: "decision", round: decided, kind, body: { ...body } });
			}
			if (kept.length > 0) {
				const reasons = new Map<string, number>();
				for (const decision of kept) {
					const reason = decision.kind === "replace" ? decision.reason : "long arguments";
					reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
				}
				for (const [reason, count] of reasons) this.changes.push(`elision: ${reason} ×${count}`);
			}
			if (report && kept.length > 0) {
				events.push({
					type: "elision",
					round,
					kind: report.kind,
					count: kept.filter((decision) => decision.kind === "replace").length,
					argumentMessages: kept.filter((decision) => decision.kind === "arguments").length,
					reclaimedBytes: kept.reduce((sum, decision) => sum + decision.bytesBefore - decision.bytesAfter, 0),
					toolResultBytesAfter: report.toolResultBytesAfter,
					...(report.auto ? { reason: { ...report.auto } } : {}),
				});
			}
			messages = project(entries, this.ledger, round);
		}
		for (const message of this.warnings.splice(0)) events.push({ type: "warning", message });
		this.lastEstimate = frame.fixedTokens + measureMessages(messages).tokens;
		this.lastSentAt = this.now();
		this.lastBuilt =
			frame.system && frame.definitions
				? { request: { system: frame.system, tools: frame.definitions, messages }, resolve: frame.resolve }
				: undefined;
		return { messages, events, forgotten };
	}

	/**
	 * True when the request about to be built sends another system prompt or tool list than the previous one (compared
	 * by identity: both are memoized while unchanged), so the provider's cache of the messages is lost anyway.
	 */
	private prefixChanges(frame: RequestFrame): boolean {
		const previous = this.lastBuilt?.request;
		if (!previous || !frame.system || !frame.definitions) return false;
		return previous.system !== frame.system || previous.tools !== frame.definitions;
	}

	/** Writes the spill files of new decisions; a failed write makes that decision bare (or drops it). */
	private writeSpills(entries: readonly Entry[], decisions: PassDecision[]): PassDecision[] {
		const pending = new Set(spillsToWrite(this.ledger, decisions));
		const kept: PassDecision[] = [];
		for (const decision of decisions) {
			if (!pending.has(decision) || !decision.spill) {
				kept.push(decision);
				continue;
			}
			const message = entries[decision.entry]?.message;
			try {
				if (decision.kind === "arguments") {
					if (message?.role !== "assistant") throw new Error(`entry ${decision.entry} is not an assistant message`);
					const elided = elideArguments(message, this.settings.elideArgumentChars, decision.spill.path);
					if (!elided) throw new Error(`entry ${decision.entry} has no arguments to elide`);
					writeSpillFile(decision.spill.path, argumentsSpillText(elided.values));
					kept.push(decision);
					continue;
				}
				if (message?.role !== "tool") throw new Error(`entry ${decision.entry} is not a tool result`);
				writeSpillFile(decision.spill.path, message.content);
				kept.push(decision);
			} catch (error) {
				if (!this.spillWarned) {
					this.spillWarned = true;
					this.warnings.push(
						`could not write spill file ${decision.spill.path} (${(error as Error).message}); elided results from now on are not recoverable`,
					);
				}
				const bare =
					decision.kind === "replace"
						? barePlaceholder(decision)
						: bareArguments(decision, message, this.settings.elideArgumentChars);
				if (bare) kept.push(bare);
			}
		}
		return kept;
	}
}

/** Writes one spill file: 0600 inside a 0700 directory. */
function writeSpillFile(path: string, text: string): void {
	const directory = dirname(path);
	mkdirSync(directory, { recursive: true, mode: 0o700 });
	chmodSync(directory, 0o700);
	writeFileSync(path, text, { mode: 0o600 });
	chmodSync(path, 0o600);
}
