import { capToolResult } from "../context/cap.js";
import type { Entry } from "../context/ledger.js";
import { DEFAULT_CONTEXT_SETTINGS } from "../context/settings.js";
import { utf8Bytes } from "../llm/text.js";
import type {
	AssistantMessage,
	ContentPart,
	Message,
	ModelRequest,
	Provider,
	SystemSegment,
	ToolCall,
	ToolResultMessage,
	Usage,
	UserMessage,
} from "../llm/types.js";
import { writeSpill } from "../tools/spill.js";
import type { Tool, ToolContext, ToolResult } from "../tools/tool.js";
import type { Toolset } from "../tools/toolset.js";
import { ContextPipeline, type RequestFrame } from "./context-pipeline.js";
import type { AgentEvent, TurnStopReason } from "./events.js";
import { DEFAULT_MAX_IMAGES_PER_REQUEST, imagesMessage, resolveImages } from "./images.js";
import { measureRequest, measureSystem, measureTools } from "./measure.js";
import { type GuardVerdict, guardedExecute, type RepeatGuard } from "./repeat-guard.js";

export interface TurnOptions {
	provider: Provider;
	/** Every tool of the session; which ones are sent each round is the toolset's decision. */
	toolset: Toolset;
	/** The system prompt, or a function returning it per round (the same array while nothing changed). */
	system: SystemSegment[] | (() => SystemSegment[]);
	/** The session's transcript before this turn, each message with its round. */
	history: Entry[];
	/** The new prompt. */
	input: UserMessage;
	sessionId: string;
	/** Round number of this turn's first request; rounds are numbered across the whole session. */
	firstRound: number;
	maxToolRounds: number;
	/**
	 * The most requests the session can make after this turn, when it cannot go on past it (a child agent: 1, the
	 * report it is asked for at its budget). With it, the context engine knows at most how many requests remain.
	 * Absent: the session may go on (a person or a later run can continue it).
	 */
	requestsAfterTurn?: number;
	signal: AbortSignal;
	/** Everything a tool gets besides its call id and the abort signal. */
	toolContext: Omit<ToolContext, "callId" | "signal">;
	/** The session's context engine (one per session, holding its ledger); default: policy "off". */
	context?: ContextPipeline;
	/** The session's repeat guard (one per session, shared by its turns). */
	guard?: RepeatGuard;
	/**
	 * Last word on a result before it joins the transcript: e.g. attaching a nested AGENTS.md the call touched.
	 * Must not throw.
	 */
	annotateResult?: (call: ToolCall, result: ToolResult) => ToolResult;
	/** True when the model can see images (default true); otherwise every image travels as its text marker. */
	vision?: boolean;
	/** Images sent per request, newest first (default 20); older ones travel as their text marker. */
	maxImagesPerRequest?: number;
	/**
	 * Asked before each call runs (after the tool is found): a refusal becomes the call's failed result, errorCode
	 * "permission_denied", its content `message` (the explanation the model reads). Absent: every call runs.
	 * Must not throw; may be called for several calls at once when a round's calls all run in parallel.
	 */
	approve?: (call: ToolCall, tool: Tool) => Promise<{ allow: boolean; message?: string }>;
}

/**
 * Runs one user turn: rounds of model request → tool calls → results until the model answers without tools,
 * the round budget is spent, or the signal aborts.
 * Contract: never throws; every message that joins the transcript is announced by a `message` event before the
 * next request, so a consumer that persists those events can always resume; ends with exactly one `turn.done`.
 */
export async function* runTurn(options: TurnOptions): AsyncGenerator<AgentEvent> {
	const entries: Entry[] = [...options.history];
	const context = options.context ?? new ContextPipeline({ ...DEFAULT_CONTEXT_SETTINGS, policy: "off" });
	const tiers = Object.fromEntries(options.toolset.all.map((tool) => [tool.name, { readOnly: tool.readOnly }]));

	let round = options.firstRound;
	options.guard?.startTurn();
	yield { type: "turn.started", round };
	entries.push({ message: options.input, round });
	yield { type: "message", round, message: options.input };

	rounds: for (let used = 0; ; used++) {
		if (options.signal.aborted) return yield* done("aborted", used);
		if (used >= options.maxToolRounds) return yield* done("max_rounds", used);
		round = options.firstRound + used;

		const tools = options.toolset.definitions();
		const system = typeof options.system === "function" ? options.system() : options.system;
		const fixedTokens = measureSystem(system).tokens + measureTools(tools).tokens;
		// The frame carries what the request is sent with, so the pipeline can replay it for a compaction summary.
		const images = {
			vision: options.vision ?? true,
			maxImages: options.maxImagesPerRequest ?? DEFAULT_MAX_IMAGES_PER_REQUEST,
		};
		const resolve = (messages: Message[]) => resolveImages(messages, images);
		const frame: RequestFrame = {
			fixedTokens,
			tools: tiers,
			system,
			definitions: tools,
			resolve,
			...(options.requestsAfterTurn === undefined
				? {}
				: { futureRequestsAtMost: options.maxToolRounds - used - 1 + options.requestsAfterTurn }),
		};
		const compaction = {
			provider: options.provider,
			entries,
			round,
			frame,
			signal: options.signal,
			sessionId: options.sessionId,
		};
		// Between rounds: once the prompt reaches context.compactRatio × window, fold the older conversation.
		if (context.needsCompaction(context.estimatePrompt(entries, round, fixedTokens))) {
			for (const event of (await context.compact({ ...compaction, trigger: "size" })).events) yield event;
		}
		const built = context.build(entries, round, frame);
		for (const event of built.events) yield event;
		options.guard?.forget(built.forgotten);
		const projected: ModelRequest = { system, tools, messages: built.messages };
		yield { type: "context", report: measureRequest(projected, round) };
		// Image references become image parts (their stored bytes) or text markers only now, on the request copy: the
		// transcript never holds base64, and the report above measures references. Old images leave requests by
		// maxImagesPerRequest (newest win); stale tool-result text is the context engine's policies' business.
		const request: ModelRequest = { ...projected, messages: resolve(built.messages) };

		let answer: { message: AssistantMessage; stopReason: TurnStopReason; usage: Usage } | undefined;
		for await (const event of options.provider.stream(request, {
			signal: options.signal,
			sessionId: options.sessionId,
		})) {
			if (event.type === "text-delta") yield { type: "text.delta", text: event.text };
			else if (event.type === "retry")
				yield { type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason };
			else if (event.type === "done")
				answer = { message: event.message, stopReason: event.stopReason, usage: event.usage };
			else if (event.type === "error") {
				if (event.error.kind === "aborted" || options.signal.aborted) return yield* done("aborted", used + 1);
				// The prompt does not fit the window: compact, then send this round again, once.
				if (event.error.kind === "context_length" && context.claimRetry(round)) {
					const compacted = await context.compact({ ...compaction, trigger: "context_length" });
					for (const compactionEvent of compacted.events) yield compactionEvent;
					if (options.signal.aborted) return yield* done("aborted", used + 1);
					if (compacted.compacted) {
						used--;
						continue rounds;
					}
				}
				yield { type: "error", message: event.error.message, kind: event.error.kind };
				return yield* done("error", used + 1);
			}
		}
		if (!answer) {
			yield { type: "error", message: "the provider ended without an answer", kind: "malformed" };
			return yield* done("error", used + 1);
		}
		const cache = context.attribute(answer.usage, system, tools);
		yield { type: "usage", round, usage: answer.usage, cache };
		context.observeUsage(answer.usage);
		entries.push({ message: answer.message, round });
		yield { type: "message", round, message: answer.message };

		const calls = answer.message.toolCalls;
		if (calls.length === 0) {
			const reason: TurnStopReason =
				answer.stopReason === "stop" || answer.stopReason === "tool_calls" ? "done" : answer.stopReason;
			return yield* done(reason, used + 1);
		}

		for (const call of calls) yield { type: "tool.call", id: call.id, name: call.name, arguments: call.arguments };
		const loadedBefore = options.toolset.loaded.length;
		const verdicts = await runCalls(calls, options);
		for (const tool of options.toolset.loaded.slice(loadedBefore)) {
			yield { type: "decision", round, kind: "tool-load", body: { tool } };
		}
		for (const [index, verdict] of verdicts.entries()) {
			const { loopSuspected } = verdict;
			if (loopSuspected) yield { type: "loop.suspected", ...loopSuspected };
			const call = calls[index] as ToolCall;
			const result = options.annotateResult ? options.annotateResult(call, verdict.result) : verdict.result;
			const spillPath = typeof result.details?.spillPath === "string" ? result.details.spillPath : undefined;
			const inserted = await capAtInsertion(
				result.content,
				call.name,
				spillPath,
				context.settings.toolResultMaxBytes,
				options,
			);
			const message: ToolResultMessage = {
				role: "tool",
				toolCallId: call.id,
				toolName: call.name,
				content: inserted.content,
				isError: !result.ok,
			};
			yield {
				type: "tool.result",
				id: call.id,
				name: call.name,
				ok: result.ok,
				output: result.content,
				display: result.display,
				errorCode: result.errorCode,
			};
			entries.push({ message, round });
			yield { type: "message", round, message, fullText: inserted.fullText, fullPath: inserted.fullPath };
		}
		const attached = imagesMessage(
			calls,
			verdicts.map((verdict) => verdict.result),
		);
		if (attached) {
			entries.push({ message: attached, round });
			yield { type: "message", round, message: attached };
		}
	}
}

/**
 * The per-result cap (`context.toolResultMaxBytes`), applied once as a result enters the transcript so it never
 * disturbs a cached prefix. The full text stays recoverable: in the tool's own spill file, or a new one.
 */
async function capAtInsertion(
	content: string,
	toolName: string,
	spillPath: string | undefined,
	maxBytes: number,
	options: TurnOptions,
): Promise<{ content: string; fullText?: string; fullPath?: string }> {
	if (maxBytes <= 0 || utf8Bytes(content) <= maxBytes) return { content, fullPath: spillPath };
	let fullPath = spillPath;
	try {
		fullPath ??= await writeSpill(options.toolContext.spillDir, content);
	} catch {
		fullPath = undefined;
	}
	const capped = capToolResult(content, { maxBytes, toolName, fullTextPath: fullPath });
	// the store keeps every byte: the tool's own spill file when it wrote one, else the text itself
	return spillPath ? { content: capped.content, fullPath: spillPath } : { content: capped.content, fullText: content };
}

async function* done(stopReason: TurnStopReason, rounds: number): AsyncGenerator<AgentEvent> {
	yield { type: "turn.done", stopReason, rounds };
}

/** Runs the calls of one assistant message: all at once when every one is read-only, else one after another. */
async function runCalls(calls: ToolCall[], options: TurnOptions): Promise<GuardVerdict[]> {
	const { toolset } = options;
	const isVisible = (callId: string) => options.context?.isVisible(callId) ?? true;
	const runOne = async (call: ToolCall): Promise<GuardVerdict> => {
		const tool = toolset.get(call.name);
		if (!tool) {
			const names = toolset
				.sent()
				.map((known) => known.name)
				.join(", ");
			return {
				result: {
					ok: false,
					errorCode: "unknown_tool",
					content: `unknown tool "${call.name}"; the tools you can call are: ${names} (and the deferred ones tool_search loads)`,
				},
			};
		}
		if (options.signal.aborted) {
			return { result: { ok: false, errorCode: "aborted", content: "not run: the turn was aborted" } };
		}
		if (options.approve) {
			const approval = await options.approve(call, tool);
			if (!approval.allow) {
				const message = approval.message ?? `permission denied: ${tool.name} was not run`;
				return { result: { ok: false, errorCode: "permission_denied", content: message } };
			}
		}
		// A deferred tool called by name without tool_search runs, and stays loaded from now on.
		const selfLoaded = toolset.isDeferred(tool) && toolset.load(tool.name);
		const context = { ...options.toolContext, callId: call.id, signal: options.signal };
		const verdict = options.guard
			? await guardedExecute(options.guard, tool, { ...call, source: tool.source }, context, isVisible)
			: { result: await tool.execute(call.arguments, context) };
		if (!selfLoaded) return verdict;
		return {
			...verdict,
			result: { ...verdict.result, content: `${verdict.result.content}\n\nloaded ${tool.name} for this session` },
		};
	};
	const parallel = calls.every((call) => toolset.get(call.name)?.readOnly === true);
	if (parallel) return Promise.all(calls.map(runOne));
	const verdicts: GuardVerdict[] = [];
	for (const call of calls) verdicts.push(await runOne(call));
	return verdicts;
}

/** A user message from plain text. */
export function userText(text: string, extra: ContentPart[] = []): UserMessage {
	return { role: "user", content: [{ type: "text", text }, ...extra] };
}
