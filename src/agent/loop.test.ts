import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_CONTEXT_SETTINGS } from "../context/settings.js";
import type { AssistantMessage, ModelRequest, Provider, ProviderEvent, ToolCall } from "../llm/types.js";
import { emptyUsage } from "../llm/types.js";
import { defineTool } from "../tools/tool.js";
import { createToolSearch } from "../tools/tool-search.js";
import { Toolset } from "../tools/toolset.js";
import { ContextPipeline, type RequestFrame } from "./context-pipeline.js";
import type { AgentEvent } from "./events.js";
import { runTurn, userText } from "./loop.js";

/** A provider that answers from a list and keeps every request it was sent. */
function scriptedProvider(replies: Array<AssistantMessage | ProviderEvent[]>): Provider & { requests: ModelRequest[] } {
	const requests: ModelRequest[] = [];
	return {
		name: "scripted",
		model: "m",
		requests,
		async *stream(request) {
			requests.push(structuredClone(request));
			const reply = replies[requests.length - 1];
			if (!reply) return yield { type: "error", error: { kind: "unknown", message: "script exhausted" } };
			if (Array.isArray(reply)) return yield* reply;
			if (reply.text) yield { type: "text-delta", text: reply.text };
			yield {
				type: "done",
				message: reply,
				stopReason: reply.toolCalls.length ? "tool_calls" : "stop",
				usage: { ...emptyUsage(), input: 10, output: 2 },
			};
		},
	};
}

const call = (id: string, name: string, args: unknown): ToolCall => ({
	id,
	name,
	arguments: typeof args === "string" ? args : JSON.stringify(args),
});
const answer = (text: string, ...toolCalls: ToolCall[]): AssistantMessage => ({ role: "assistant", text, toolCalls });

const timeline: string[] = [];
const slow = (name: string, readOnly: boolean) =>
	defineTool({
		name,
		description: `${name} test tool`,
		parameters: z.object({ label: z.string() }),
		permission: readOnly ? "read" : "write",
		readOnly,
		async run({ label }) {
			timeline.push(`start ${label}`);
			await new Promise((resolve) => setTimeout(resolve, 20));
			timeline.push(`end ${label}`);
			return { ok: true, content: `${name} did ${label}` };
		},
	});

async function run(provider: Provider, overrides: Partial<Parameters<typeof runTurn>[0]> = {}) {
	const events: AgentEvent[] = [];
	for await (const event of runTurn({
		provider,
		toolset: new Toolset([slow("look", true), slow("change", false)], { deferred: false, eager: [] }),
		system: [{ tier: "stable", text: "sys" }],
		history: [],
		input: userText("do it"),
		sessionId: "s1",
		firstRound: 1,
		maxToolRounds: 10,
		signal: new AbortController().signal,
		toolContext: { cwd: "/tmp", home: "/tmp", sessionId: "s1", spillDir: "/tmp/spill" },
		...overrides,
	}))
		events.push(event);
	return events;
}

describe("runTurn", () => {
	it("tells the context engine how many requests can still follow when the session ends with the turn", async () => {
		const seen: (number | undefined)[] = [];
		class Recording extends ContextPipeline {
			override build(...args: Parameters<ContextPipeline["build"]>) {
				seen.push((args[2] as RequestFrame).futureRequestsAtMost);
				return super.build(...args);
			}
		}
		const replies = () => [
			answer("", call("a", "look", {})),
			answer("", call("b", "look", {})),
			answer("", call("c", "look", {})),
		];
		const context = () => new Recording({ ...DEFAULT_CONTEXT_SETTINGS, policy: "off" });
		// a child's turn: 3 tool rounds, then the one report request it may be asked for
		await run(scriptedProvider(replies()), { maxToolRounds: 3, requestsAfterTurn: 1, context: context() });
		expect(seen).toEqual([3, 2, 1]);
		seen.length = 0;
		await run(scriptedProvider(replies()), { maxToolRounds: 3, context: context() });
		expect(seen).toEqual([undefined, undefined, undefined]);
	});

	it("runs rounds until a final answer and pairs results with their calls", async () => {
		const provider = scriptedProvider([answer("", call("a", "look", { label: "x" })), answer("finished")]);
		const events = await run(provider);
		expect(events.filter((event) => event.type === "turn.done")).toEqual([
			{ type: "turn.done", stopReason: "done", rounds: 2 },
		]);
		const second = provider.requests[1]!;
		expect(second.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
		expect(second.messages[2]).toEqual({
			role: "tool",
			toolCallId: "a",
			toolName: "look",
			content: "look did x",
			isError: false,
		});
		expect(events.filter((event) => event.type === "message")).toHaveLength(4);
	});

	it("runs read-only calls in parallel and others in order", async () => {
		timeline.length = 0;
		await run(
			scriptedProvider([
				answer("", call("a", "look", { label: "1" }), call("b", "look", { label: "2" })),
				answer("ok"),
			]),
		);
		expect(timeline).toEqual(["start 1", "start 2", "end 1", "end 2"]);
		timeline.length = 0;
		await run(
			scriptedProvider([
				answer("", call("a", "look", { label: "1" }), call("b", "change", { label: "2" })),
				answer("ok"),
			]),
		);
		expect(timeline).toEqual(["start 1", "end 1", "start 2", "end 2"]);
	});

	it("answers malformed arguments and unknown tools with error results, and goes on", async () => {
		const provider = scriptedProvider([
			answer("", call("a", "look", "{not json"), call("b", "look", { label: 5 }), call("c", "nope", {})),
			answer("done anyway"),
		]);
		const events = await run(provider);
		const results = events.filter((event) => event.type === "tool.result");
		expect(results.map((event) => [event.ok, event.errorCode])).toEqual([
			[false, "invalid_arguments"],
			[false, "invalid_arguments"],
			[false, "unknown_tool"],
		]);
		expect(results[0]?.output).toContain("not valid JSON");
		expect(results[1]?.output).toContain("label");
		expect(results[2]?.output).toContain('unknown tool "nope"');
		expect(events.at(-1)).toEqual({ type: "turn.done", stopReason: "done", rounds: 2 });
	});

	it("stops at the round budget", async () => {
		const looping = Array.from({ length: 5 }, (_, index) =>
			answer("", call(`c${index}`, "look", { label: String(index) })),
		);
		const events = await run(scriptedProvider(looping), { maxToolRounds: 3 });
		expect(events.at(-1)).toEqual({ type: "turn.done", stopReason: "max_rounds", rounds: 3 });
	});

	it("ends with an error event and turn.done error when the provider fails", async () => {
		const events = await run(
			scriptedProvider([[{ type: "error", error: { kind: "auth", message: "set OPENAI_API_KEY" } }]]),
		);
		expect(events.slice(-2)).toEqual([
			{ type: "error", message: "set OPENAI_API_KEY", kind: "auth" },
			{ type: "turn.done", stopReason: "error", rounds: 1 },
		]);
	});

	it("answers a call left without a result in the history before sending", async () => {
		const provider = scriptedProvider([answer("resumed")]);
		await run(provider, {
			history: [
				{ message: userText("first"), round: 1 },
				{ message: answer("", call("lost", "look", { label: "x" })), round: 1 },
			],
		});
		expect(provider.requests[0]!.messages[2]).toMatchObject({ role: "tool", toolCallId: "lost", isError: true });
	});

	it("reports what each request carried", async () => {
		const events = await run(scriptedProvider([answer("hi")]));
		const context = events.find((event) => event.type === "context");
		expect(context?.type === "context" && context.report.total.bytes).toBeGreaterThan(0);
		expect(context?.type === "context" && context.report.round).toBe(1);
	});

	it("runs a deferred tool called by name, loads it for the session and says so once", async () => {
		const toolset: Toolset = new Toolset(
			[slow("look", true), slow("browser_open", true), createToolSearch(() => toolset)],
			{ deferred: true, eager: ["look"] },
		);
		const provider = scriptedProvider([
			answer("", call("a", "browser_open", { label: "x" })),
			answer("", call("b", "browser_open", { label: "y" })),
			answer("done"),
		]);
		const events = await run(provider, { toolset });
		expect(provider.requests[0]!.tools.map((tool) => tool.name)).toEqual(["look", "tool_search"]);
		expect(provider.requests[1]!.tools.map((tool) => tool.name)).toEqual(["look", "tool_search", "browser_open"]);
		const outputs = events.filter((event) => event.type === "tool.result").map((event) => event.output);
		expect(outputs).toEqual(["browser_open did x\n\nloaded browser_open for this session", "browser_open did y"]);
		expect(events.filter((event) => event.type === "decision")).toEqual([
			{ type: "decision", round: 1, kind: "tool-load", body: { tool: "browser_open" } },
		]);
	});

	it("loads tools found by tool_search after the tools already sent, never reordering them", async () => {
		const toolset: Toolset = new Toolset(
			[
				slow("look", true),
				slow("browser_open", true),
				slow("browser_click", true),
				slow("git_diff", true),
				createToolSearch(() => toolset),
			],
			{ deferred: true, eager: ["look"] },
		);
		const provider = scriptedProvider([
			answer("", call("a", "tool_search", { query: "select:git_diff" })),
			answer("", call("b", "tool_search", { query: "+browser click" })),
			answer("done"),
		]);
		await run(provider, { toolset });
		const names = provider.requests.map((request) => request.tools.map((tool) => tool.name));
		expect(names).toEqual([
			["look", "tool_search"],
			["look", "tool_search", "git_diff"],
			["look", "tool_search", "git_diff", "browser_click", "browser_open"],
		]);
	});
});
