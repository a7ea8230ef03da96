import {
	type CheckpointDecision,
	compactionBudget,
	mechanicalDigest,
	planCompaction,
	SUMMARY_HEADINGS,
} from "../context/compaction.js";
import type { Decision, Entry } from "../context/ledger.js";
import { project, shownEntries } from "../context/project.js";
import type { ContextSettings } from "../context/settings.js";
import { oneLine } from "../llm/errors.js";
import type {
	Message,
	ModelRequest,
	Provider,
	ProviderError,
	SystemSegment,
	ToolDefinition,
	Usage,
	UserMessage,
} from "../llm/types.js";
import type { AgentEvent } from "./events.js";

/** What started a compaction. */
export type CompactionTrigger = "size" | "context_length" | "manual";

export interface CompactOptions {
	provider: Provider;
	/**
	 * The last main request the provider answered, exactly as sent (system, tools, messages). The summary request is
	 * this object plus one instruction message, so the provider serves it from its prefix cache. Undefined: no summary
	 * call is made and the mechanical digest stands in.
	 */
	lastRequest: ModelRequest | undefined;
	entries: readonly Entry[];
	ledger: readonly Decision[];
	/** The round about to be sent; the checkpoint applies from it on. */
	round: number;
	settings: ContextSettings;
	trigger: CompactionTrigger;
	/** Estimated prompt tokens of the request for `round` without the checkpoint (calibrated). */
	tokensBefore: number;
	/** Estimated prompt tokens of a request carrying `messages` (system and tools included, calibrated). */
	measure: (messages: Message[]) => number;
	signal?: AbortSignal;
	sessionId?: string;
}

export interface Compaction {
	decision: CheckpointDecision;
	/** In order: warnings (a failed summary call), the `decision` event, the `compaction` event. */
	events: AgentEvent[];
}

/**
 * Takes a compaction checkpoint for the request for `round`: plans the cut (src/context/compaction.ts), asks the
 * model for a summary of what is folded — the last main request replayed with one instruction appended, tools kept
 * so every byte of its prefix is the same — and falls back to the mechanical digest when there is no last request,
 * the call fails, or the answer is empty or calls tools (each with one `warning` event). The caller appends the
 * decision to its ledger and persists the `decision` event.
 * Returns undefined when there is nothing to fold, or when the signal aborted the summary call.
 * Contract: never throws (the provider's stream never does).
 */
export async function compact(options: CompactOptions): Promise<Compaction | undefined> {
	const { entries, ledger, round, settings } = options;
	const plan = planCompaction(entries, ledger, round, compactionBudget(settings.contextWindow));
	if (!plan) return undefined;
	const events: AgentEvent[] = [];

	let summary: string | undefined;
	let usage: Usage | undefined;
	if (options.lastRequest) {
		const request = summaryRequest(options.lastRequest, entries, ledger, round, plan, settings.contextWindow);
		const answer = await ask(options.provider, request, options.signal, options.sessionId);
		if (answer.aborted || options.signal?.aborted) return undefined;
		usage = answer.usage;
		if (answer.failure) events.push(warning(`the summary request failed (${answer.failure.message})`));
		else if (answer.calledTools) events.push(warning("the summary answer called tools instead of summarizing"));
		else if (answer.text === "") events.push(warning("the summary answer was empty"));
		else summary = answer.text;
	}
	const source = summary === undefined ? "digest" : "summary";
	const text =
		summary ?? mechanicalDigest(entries, plan.firstKept, { from: plan.foldFrom, previous: plan.previous?.summary });

	const draft: CheckpointDecision = {
		kind: "checkpoint",
		round,
		firstKept: plan.firstKept,
		pinned: plan.pinned,
		summary: text,
		tokensBefore: options.tokensBefore,
		tokensAfter: 0,
		source,
	};
	const tokensAfter = options.measure(project(entries, [...ledger, draft], round));
	const decision: CheckpointDecision = { ...draft, tokensAfter };
	const { kind, round: decided, ...body } = decision;
	events.push({ type: "decision", round: decided, kind, body: { ...body } });
	events.push({
		type: "compaction",
		round,
		source,
		trigger: options.trigger,
		tokensBefore: options.tokensBefore,
		tokensAfter,
		...(usage ? { usage } : {}),
	});
	return { decision, events };
}

/**
 * The request the session last sent, rebuilt from the transcript and the ledger: the entries before the newest
 * assistant message (its answer), projected for that message's round, with the given system prompt and tools.
 * A pure projection, so it has the bytes the request had when system and tools are unchanged. Undefined before the
 * first answer.
 */
export function rebuildLastRequest(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	frame: { system: SystemSegment[]; tools: ToolDefinition[] },
): ModelRequest | undefined {
	const newest = entries.findLastIndex((entry) => entry.message.role === "assistant");
	if (newest < 0) return undefined;
	const round = (entries[newest] as Entry).round;
	return { system: frame.system, tools: frame.tools, messages: project(entries.slice(0, newest), ledger, round) };
}

/** The fixed instruction; `{anchor}` is replaced by where the verbatim tail starts. */
export const SUMMARY_INSTRUCTION = [
	"Compact the conversation so far. Do not call any tool: answer with the summary only.",
	"{anchor}",
	`Use exactly these headings, each on its own "## " line, in this order: ${SUMMARY_HEADINGS.join(", ")}.`,
	"- Task: what the user asked, with every requirement and constraint they gave.",
	"- Decisions: what was decided and why, including approaches ruled out.",
	"- Files touched: every path read, written or edited, and what changed in it.",
	"- Current state: what is done, what works, what fails (exact error messages).",
	"- Next steps: what remains to do, in order.",
	"Be terse. Keep exact names, paths, commands, numbers and error messages. Do not invent anything the conversation does not say.",
].join("\n");

/** The last main request plus one user message asking for the summary; every other field stays as it was. */
function summaryRequest(
	last: ModelRequest,
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
	plan: { firstKept: number; pinned: number[] },
	contextWindow: number,
): ModelRequest {
	const newest = entries.findLastIndex((entry) => entry.message.role === "assistant");
	const kept = shownEntries(entries, ledger, round)[plan.firstKept];
	// The newest assistant message answered the last request: a cut there means everything the request holds folds.
	const anchor =
		plan.firstKept < newest && kept
			? `Summarize everything above up to, not including, the ${kept.role === "assistant" ? "assistant" : "user"} message that begins "${excerpt(kept)}": that message and everything after it stay verbatim after your summary, so leave them out.`
			: "Summarize everything above: the newest messages will follow your summary verbatim.";
	const pinned = plan.pinned.length > 0 ? " The first user message stays verbatim too." : "";
	const instruction: UserMessage = {
		role: "user",
		content: [{ type: "text", text: SUMMARY_INSTRUCTION.replace("{anchor}", anchor + pinned) }],
	};
	const budget = contextWindow > 0 ? Math.min(8_192, Math.max(1_024, Math.floor(contextWindow * 0.05))) : 4_096;
	return {
		...last,
		messages: [...last.messages, instruction],
		maxOutputTokens: Math.min(last.maxOutputTokens ?? budget, budget),
	};
}

function excerpt(message: Message): string {
	const text =
		message.role === "assistant"
			? message.text || message.toolCalls.map((call) => `${call.name} ${call.arguments}`).join("; ")
			: message.role === "tool"
				? message.content
				: message.content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
	return oneLine(text, 120).replaceAll('"', "'");
}

interface Answer {
	text: string;
	calledTools: boolean;
	usage?: Usage;
	failure?: ProviderError;
	aborted: boolean;
}

async function ask(
	provider: Provider,
	request: ModelRequest,
	signal: AbortSignal | undefined,
	sessionId: string | undefined,
): Promise<Answer> {
	const answer: Answer = { text: "", calledTools: false, aborted: false };
	for await (const event of provider.stream(request, { signal, sessionId })) {
		if (event.type === "done") {
			answer.text = event.message.text.replace(/<\/?compaction-summary>/g, "").trim();
			answer.calledTools = event.message.toolCalls.length > 0;
			answer.usage = event.usage;
		} else if (event.type === "error") {
			if (event.error.kind === "aborted") answer.aborted = true;
			else answer.failure = event.error;
		}
	}
	return answer;
}

function warning(reason: string): AgentEvent {
	return { type: "warning", message: `compaction: ${reason}; a mechanical digest stands in for the summary` };
}
