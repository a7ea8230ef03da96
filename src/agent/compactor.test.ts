import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { CheckpointDecision, Entry } from "../context/ledger.js";
import { project } from "../context/project.js";
import { DEFAULT_CONTEXT_SETTINGS } from "../context/settings.js";
import type { AssistantMessage, ModelRequest, Provider, ProviderEvent, UserMessage } from "../llm/types.js";
import { emptyUsage } from "../llm/types.js";
import { defineTool } from "../tools/tool.js";
import { Toolset } from "../tools/toolset.js";
import { compact, rebuildLastRequest } from "./compactor.js";
import { ContextPipeline } from "./context-pipeline.js";
import type { AgentEvent } from "./events.js";
import { runTurn, userText } from "./loop.js";
import { measureRequest } from "./measure.js";

type Summary = "text" | "error" | "tools" | "empty";

/** True for the compaction summary request: its last message is the instruction. */
function isSummaryRequest(request: ModelRequest): boolean {
	const last = request.messages.at(-1);
	return last?.role === "user" && last.content.some((part) => part.type === "text" && part.text.startsWith("Compact"));
}

/**
 * A provider that answers summary requests per `summary` and every other request by calling `look` (a different
 * label each time) until `rounds` calls were made, then with a final answer. Requests listed in `tooLong` (counting
 * main requests from 0) fail with a context-length error. Keeps a copy of every request.
 */
function provider(options: { rounds: number; summary: Summary; tooLong?: number[] }) {
	const requests: ModelRequest[] = [];
	let main = 0;
	const scripted: Provider & { requests: ModelRequest[] } = {
		name: "scripted",
		model: "m",
		requests,
		async *stream(request): AsyncIterable<ProviderEvent> {
			requests.push(structuredClone(request));
			const usage = { ...emptyUsage(), input: 10, output: 2 };
			if (isSummaryRequest(request)) {
				if (options.summary === "error")
					return yield { type: "error", error: { kind: "server", message: "HTTP 503 overloaded" } };
				const message: AssistantMessage =
					options.summary === "tools"
						? { role: "assistant", text: "", toolCalls: [{ id: "s", name: "look", arguments: "{}" }] }
						: {
								role: "assistant",
								text: options.summary === "empty" ? "  " : "## Task\nlook at things\n## Next steps\nlook more",
								toolCalls: [],
							};
				return yield { type: "done", message, stopReason: "stop", usage };
			}
			const index = main++;
			if (options.tooLong?.includes(index)) {
				return yield {
					type: "error",
					error: { kind: "context_length", message: "the prompt is larger than the model's context window" },
				};
			}
			const message: AssistantMessage =
				index < options.rounds
					? {
							role: "assistant",
							text: "",
							toolCalls: [{ id: `c${index}`, name: "look", arguments: JSON.stringify({ label: `r${index}` }) }],
						}
					: { role: "assistant", text: "all done", toolCalls: [] };
			yield { type: "done", message, stopReason: message.toolCalls.length ? "tool_calls" : "stop", usage };
		},
	};
	return scripted;
}

/** About 400 estimated tokens of distinct words, different for each label. */
const look = defineTool({
	name: "look",
	description: "look at something",
	parameters: z.object({ label: z.string() }),
	permission: "read",
	readOnly: true,
	async run({ label }) {
		return { ok: true, content: Array.from({ length: 200 }, (_, index) => `${label}w${index}`).join(" ") };
	},
});

async function run(
	scripted: Provider,
	options: { window: number; system?: string; rounds?: number; history?: Entry[]; context?: ContextPipeline },
) {
	const context =
		options.context ??
		new ContextPipeline({ ...DEFAULT_CONTEXT_SETTINGS, policy: "off", contextWindow: options.window, spillDir: "off" });
	const events: AgentEvent[] = [];
	for await (const event of runTurn({
		provider: scripted,
		toolset: new Toolset([look], { deferred: false, eager: [] }),
		system: [{ tier: "stable", text: options.system ?? "You look at things." }],
		history: options.history ?? [],
		input: userText("look at everything"),
		sessionId: "s1",
		firstRound: 1,
		maxToolRounds: 30,
		signal: new AbortController().signal,
		toolContext: { cwd: "/tmp", home: "/tmp", sessionId: "s1", spillDir: "/tmp/spill" },
		context,
	}))
		events.push(event);
	return { events, context };
}

const ofType = <T extends AgentEvent["type"]>(events: AgentEvent[], type: T) =>
	events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
const textOf = (message: UserMessage | undefined) =>
	message?.content.map((part) => (part.type === "text" ? part.text : "")).join("") ?? "";

describe("compaction in the agent loop", () => {
	it("by size: the summary request is the last request plus one instruction, and later requests carry the checkpoint", async () => {
		const scripted = provider({ rounds: 12, summary: "text" });
		const { events } = await run(scripted, { window: 3000 });
		const compactions = ofType(events, "compaction");
		expect(compactions.length).toBeGreaterThan(0);
		expect(compactions[0]).toMatchObject({ source: "summary", trigger: "size" });
		expect(compactions[0]?.tokensBefore).toBeGreaterThanOrEqual(0.85 * 3000);
		expect(compactions[0]?.tokensAfter).toBeLessThan(0.85 * 3000);

		const at = scripted.requests.findIndex(isSummaryRequest);
		const summary = scripted.requests[at] as ModelRequest;
		const previous = scripted.requests[at - 1] as ModelRequest;
		expect(summary.system).toEqual(previous.system);
		expect(summary.tools).toEqual(previous.tools);
		expect(summary.messages.slice(0, -1)).toEqual(previous.messages);
		expect(summary.messages).toHaveLength(previous.messages.length + 1);
		expect(textOf(summary.messages.at(-1) as UserMessage)).toMatch(
			/Task, Decisions, Files touched, Current state, Next steps/,
		);

		// the next main request: the first user message, the summary, then the verbatim tail
		const next = scripted.requests[at + 1] as ModelRequest;
		expect(next.messages[0]).toEqual(userText("look at everything"));
		expect(textOf(next.messages[1] as UserMessage)).toMatch(
			/^<compaction-summary>\n[^\n]+\n\n## Task\nlook at things\n## Next steps\nlook more\n<\/compaction-summary>$/,
		);
		// the tail is the transcript's newest messages, verbatim, starting at an assistant message
		const transcript = ofType(events, "message").map((event) => event.message);
		const tail = next.messages.slice(2);
		const start = transcript.findIndex((message) => JSON.stringify(message) === JSON.stringify(tail[0]));
		expect(tail[0]?.role).toBe("assistant");
		expect(transcript.slice(start, start + tail.length)).toEqual(tail);
		expect(tail.at(-1)?.role).toBe("tool");
		expect(next.messages.length).toBeLessThan(previous.messages.length);

		const decisions = ofType(events, "decision").filter((event) => event.kind === "checkpoint");
		expect(decisions).toHaveLength(compactions.length);
		expect(decisions[0]?.body).toMatchObject({ source: "summary", pinned: [0] });
		expect(ofType(events, "turn.done")[0]?.stopReason).toBe("done");
	});

	it("a later compaction works on the checkpoint: it replays the compacted request, never the uncompacted one", async () => {
		const scripted = provider({ rounds: 20, summary: "text" });
		const { events } = await run(scripted, { window: 3000 });
		expect(ofType(events, "compaction").length).toBeGreaterThanOrEqual(2);
		const summaries = scripted.requests.filter(isSummaryRequest);
		const second = summaries[1] as ModelRequest;
		expect(textOf(second.messages[1] as UserMessage)).toContain("<compaction-summary>");
		// every main request is sent under the trigger: each compaction brought relief, none restarted from the
		// uncompacted transcript
		const mains = scripted.requests.filter((request) => !isSummaryRequest(request));
		for (const request of mains) expect(measureRequest(request, 0).total.tokens).toBeLessThan(0.85 * 3000);
		expect(Math.max(...mains.map((request) => request.messages.length))).toBeLessThan(12);
	});

	for (const [summary, reason] of [
		["error", /summary request failed \(HTTP 503 overloaded\)/],
		["tools", /called tools/],
		["empty", /was empty/],
	] as const) {
		it(`a summary call that ${summary === "error" ? "fails" : summary === "tools" ? "calls tools" : "says nothing"} gives the mechanical digest`, async () => {
			const scripted = provider({ rounds: 12, summary });
			const { events } = await run(scripted, { window: 3000 });
			const compaction = ofType(events, "compaction")[0];
			expect(compaction?.source).toBe("digest");
			expect(ofType(events, "warning").some((event) => reason.test(event.message))).toBe(true);
			const at = scripted.requests.findIndex(isSummaryRequest);
			const text = textOf(scripted.requests[at + 1]?.messages[1] as UserMessage);
			expect(text).toMatch(/## Task\nlook at everything/);
			expect(text).toMatch(/## Decisions\nNo model summary was available/);
			expect(text).toContain('- look {"label":"r0"}');
			expect(ofType(events, "turn.done")[0]?.stopReason).toBe("done");
		});
	}

	it("stuck latch: two compactions without relief give one warning and no third compaction", async () => {
		// the system prompt alone is over the trigger: no compaction can bring relief
		const system = Array.from({ length: 1500 }, (_, index) => `rule${index}`).join(" ");
		const scripted = provider({ rounds: 10, summary: "text" });
		const { events, context } = await run(scripted, { window: 3000, system });
		expect(ofType(events, "compaction")).toHaveLength(2);
		expect(scripted.requests.filter(isSummaryRequest)).toHaveLength(2);
		const warnings = ofType(events, "warning").filter((event) => event.message.includes("no relief"));
		expect(warnings).toHaveLength(1);
		expect(ofType(events, "turn.done")[0]?.stopReason).toBe("done");
		// T4: the latch holds while the prompt stays high; a prompt below the trigger clears it
		expect(context.needsCompaction(3000)).toBe(false);
		expect(context.needsCompaction(100)).toBe(false);
		expect(context.needsCompaction(3000)).toBe(true);
	});

	it("a context-length error compacts and sends the same round again, once", async () => {
		const scripted = provider({ rounds: 4, summary: "text", tooLong: [3] });
		const { events } = await run(scripted, { window: 1_000_000 });
		const compactions = ofType(events, "compaction");
		expect(compactions).toHaveLength(1);
		expect(compactions[0]).toMatchObject({ trigger: "context_length", round: 4 });
		const at = scripted.requests.findIndex(isSummaryRequest);
		// the failed request, the summary request replaying the last answered one, the retry
		expect(scripted.requests[at]?.messages.slice(0, -1)).toEqual(scripted.requests[at - 2]?.messages);
		expect(textOf(scripted.requests[at + 1]?.messages[1] as UserMessage)).toContain("<compaction-summary>");
		expect(ofType(events, "error")).toHaveLength(0);
		expect(ofType(events, "turn.done")[0]?.stopReason).toBe("done");

		const twice = provider({ rounds: 4, summary: "text", tooLong: [3, 4] });
		const failed = await run(twice, { window: 1_000_000 });
		expect(ofType(failed.events, "compaction")).toHaveLength(1);
		expect(ofType(failed.events, "error")[0]?.kind).toBe("context_length");
		expect(ofType(failed.events, "turn.done")[0]?.stopReason).toBe("error");
	});

	it("a resumed session rebuilds the same bytes: its last request, and the checkpoint from the stored ledger", async () => {
		const scripted = provider({ rounds: 12, summary: "text" });
		const { events, context } = await run(scripted, { window: 3000 });
		const entries: Entry[] = [];
		for (const event of events)
			if (event.type === "message") entries.push({ message: event.message, round: event.round });
		const ledger = context.decisions;
		expect(ledger.some((decision) => decision.kind === "checkpoint")).toBe(true);
		const last = scripted.requests.at(-1) as ModelRequest;
		expect(rebuildLastRequest(entries, ledger, { system: last.system, tools: last.tools })).toEqual(last);
		// decisions as the store keeps them (kind, round, body) round-trip into the same projection
		const stored = ofType(events, "decision").map(
			(event) => ({ ...event.body, kind: event.kind, round: event.round }) as CheckpointDecision,
		);
		expect(project(entries, stored, 99)).toEqual(project(entries, ledger, 99));
	});
});

describe("compact", () => {
	it("without a last request makes no call and gives the digest", async () => {
		const scripted = provider({ rounds: 0, summary: "text" });
		const entries: Entry[] = [
			{ round: 1, message: userText("first") },
			{ round: 1, message: { role: "assistant", text: "", toolCalls: [{ id: "a", name: "look", arguments: "{}" }] } },
			{ round: 1, message: { role: "tool", toolCallId: "a", toolName: "look", content: "seen", isError: false } },
			{ round: 2, message: { role: "assistant", text: "more", toolCalls: [] } },
		];
		const result = await compact({
			provider: scripted,
			lastRequest: undefined,
			entries,
			ledger: [],
			round: 3,
			settings: DEFAULT_CONTEXT_SETTINGS,
			trigger: "manual",
			tokensBefore: 100,
			measure: () => 42,
		});
		expect(scripted.requests).toHaveLength(0);
		expect(result?.decision).toMatchObject({ kind: "checkpoint", firstKept: 3, pinned: [0], source: "digest" });
		expect(result?.decision.tokensAfter).toBe(42);
		expect(result?.events.map((event) => event.type)).toEqual(["decision", "compaction"]);
	});
});
