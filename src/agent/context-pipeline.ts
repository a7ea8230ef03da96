import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { PRICE_SHEETS, type PriceSheet } from "../context/cost.js";
import { runPolicy } from "../context/engine.js";
import { type Decision, type Entry, type ReplaceDecision, spillsToWrite } from "../context/ledger.js";
import { barePlaceholder } from "../context/placeholders.js";
import { project } from "../context/project.js";
import type { ContextSettings } from "../context/settings.js";
import type { SnipTool } from "../context/snip.js";
import type { Message, Usage } from "../llm/types.js";
import type { AgentEvent } from "./events.js";
import { measureMessages } from "./measure.js";

/** What the pipeline adds to each request: the fixed parts the context engine does not rewrite. */
export interface RequestFrame {
	/** Estimated tokens of the system prompt and tool definitions. */
	fixedTokens: number;
	tools: Record<string, SnipTool>;
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
	private noteReplaced(entries: readonly Entry[], decisions: readonly ReplaceDecision[]): string[] {
		const ids: string[] = [];
		for (const decision of decisions) {
			const message = entries[decision.entry]?.message;
			if (message?.role !== "tool") continue;
			this.replacedCalls.add(message.toolCallId);
			ids.push(message.toolCallId);
		}
		return ids;
	}

	/** Rebuilds what is visible after a resume: every replace decision already in the ledger. */
	restore(entries: readonly Entry[]): void {
		this.noteReplaced(
			entries,
			this.ledger.filter((decision): decision is ReplaceDecision => decision.kind === "replace"),
		);
	}

	/** Calibrates token estimates with the provider's real count for the last request. */
	observeUsage(usage: Usage): void {
		if (this.lastEstimate > 0 && usage.input > 0) {
			const ratio = usage.input / this.lastEstimate;
			if (ratio > 0.25 && ratio < 4) this.calibration = ratio;
		}
	}

	/**
	 * The messages of the request for `round`, after the policy's new decisions (if any).
	 * `forgotten` lists the calls whose results this pass replaced (for the repeat guard).
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
			economy: { sheet: this.sheet, idleSeconds: this.lastSentAt === undefined ? 0 : this.now() - this.lastSentAt },
		});
		let forgotten: string[] = [];
		let messages = before;
		if (decisions.length > 0) {
			const kept = this.writeSpills(entries, decisions);
			this.ledger.push(...kept);
			forgotten = this.noteReplaced(entries, kept);
			for (const decision of kept) {
				const { kind, round: decided, ...body } = decision;
				events.push({ type: "decision", round: decided, kind, body: { ...body } });
			}
			if (report && kept.length > 0) {
				events.push({
					type: "elision",
					round,
					kind: report.kind,
					count: kept.length,
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
		return { messages, events, forgotten };
	}

	/** Writes the spill files of new decisions; a failed write makes that decision bare (or drops it). */
	private writeSpills(entries: readonly Entry[], decisions: ReplaceDecision[]): ReplaceDecision[] {
		const pending = new Set(spillsToWrite(this.ledger, decisions));
		const kept: ReplaceDecision[] = [];
		for (const decision of decisions) {
			if (!pending.has(decision) || !decision.spill) {
				kept.push(decision);
				continue;
			}
			const message = entries[decision.entry]?.message;
			try {
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
				const bare = barePlaceholder(decision);
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
