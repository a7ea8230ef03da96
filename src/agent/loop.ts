import { repairTranscript } from "../context/transcript.js";
import type {
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
import type { ToolContext } from "../tools/tool.js";
import type { Toolset } from "../tools/toolset.js";
import type { AgentEvent, TurnStopReason } from "./events.js";
import { measureRequest } from "./measure.js";
import { type GuardVerdict, guardedExecute, type RepeatGuard } from "./repeat-guard.js";

/** Builds the request for one round from the transcript; the context engine plugs in here. */
export type RequestBuilder = (input: { messages: Message[]; round: number }) => ModelRequest;

export interface TurnOptions {
	provider: Provider;
	/** Every tool of the session; which ones are sent each round is the toolset's decision. */
	toolset: Toolset;
	system: SystemSegment[];
	/** The session's transcript before this turn. */
	history: Message[];
	/** The new prompt. */
	input: UserMessage;
	sessionId: string;
	/** Round number of this turn's first request; rounds are numbered across the whole session. */
	firstRound: number;
	maxToolRounds: number;
	signal: AbortSignal;
	/** Everything a tool gets besides its call id and the abort signal. */
	toolContext: Omit<ToolContext, "callId" | "signal">;
	/** Defaults to: the repaired transcript, the system prompt and every tool definition. */
	buildRequest?: RequestBuilder;
	/** The session's repeat guard (one per session, shared by its turns). */
	guard?: RepeatGuard;
	/** Whether a call's result still reaches the model verbatim (the context engine may have replaced it). */
	isVisible?: (callId: string) => boolean;
}

/**
 * Runs one user turn: rounds of model request → tool calls → results until the model answers without tools,
 * the round budget is spent, or the signal aborts.
 * Contract: never throws; every message that joins the transcript is announced by a `message` event before the
 * next request, so a consumer that persists those events can always resume; ends with exactly one `turn.done`.
 */
export async function* runTurn(options: TurnOptions): AsyncGenerator<AgentEvent> {
	const messages: Message[] = [...options.history];
	const build: RequestBuilder =
		options.buildRequest ??
		(({ messages: transcript }) => ({
			system: options.system,
			tools: options.toolset.definitions(),
			messages: repairTranscript(transcript),
		}));

	let round = options.firstRound;
	options.guard?.startTurn();
	yield { type: "turn.started", round };
	messages.push(options.input);
	yield { type: "message", round, message: options.input };

	for (let used = 0; ; used++) {
		if (options.signal.aborted) return yield* done("aborted", used);
		if (used >= options.maxToolRounds) return yield* done("max_rounds", used);
		round = options.firstRound + used;

		const request = build({ messages, round });
		yield { type: "context", report: measureRequest(request, round) };

		let answer:
			| { message: Extract<Message, { role: "assistant" }>; stopReason: TurnStopReason; usage: Usage }
			| undefined;
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
				yield { type: "error", message: event.error.message, kind: event.error.kind };
				return yield* done("error", used + 1);
			}
		}
		if (!answer) {
			yield { type: "error", message: "the provider ended without an answer", kind: "malformed" };
			return yield* done("error", used + 1);
		}
		yield { type: "usage", round, usage: answer.usage };
		messages.push(answer.message);
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
		for (const [index, { result, loopSuspected }] of verdicts.entries()) {
			if (loopSuspected) yield { type: "loop.suspected", ...loopSuspected };
			const call = calls[index] as ToolCall;
			const message: ToolResultMessage = {
				role: "tool",
				toolCallId: call.id,
				toolName: call.name,
				content: result.content,
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
			messages.push(message);
			const spillPath = typeof result.details?.spillPath === "string" ? result.details.spillPath : undefined;
			yield { type: "message", round, message, fullPath: spillPath };
		}
	}
}

async function* done(stopReason: TurnStopReason, rounds: number): AsyncGenerator<AgentEvent> {
	yield { type: "turn.done", stopReason, rounds };
}

/** Runs the calls of one assistant message: all at once when every one is read-only, else one after another. */
async function runCalls(calls: ToolCall[], options: TurnOptions): Promise<GuardVerdict[]> {
	const { toolset } = options;
	const isVisible = options.isVisible ?? (() => true);
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
