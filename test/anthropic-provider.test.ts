import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { countCacheBreakpoints, createAnthropicProvider } from "../src/llm/anthropic.js";
import type { RetryPolicy } from "../src/llm/retry.js";
import type { ModelRequest, Provider, ProviderEvent, StreamOptions, ToolDefinition } from "../src/llm/types.js";
import { type FakeProvider, type ScriptStep, startFakeProvider } from "./support/fake-provider.js";

const POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

const READ_FILE: ToolDefinition = {
	name: "read_file",
	description: "Read a file",
	parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const REQUEST: ModelRequest = {
	system: [
		{ tier: "stable", text: "You are a careful coding agent." },
		{ tier: "volatile", text: "Now: round 1" },
	],
	tools: [READ_FILE],
	messages: [{ role: "user", content: [{ type: "text", text: "What is in a.ts?" }] }],
};

const fakes: FakeProvider[] = [];

afterEach(async () => {
	await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(...script: ScriptStep[]): Promise<FakeProvider> {
	const started = await startFakeProvider({ script });
	fakes.push(started);
	return started;
}

function provider(baseURL: string, policy: RetryPolicy = POLICY): Provider {
	return createAnthropicProvider({ model: "claude-test", apiKey: "test-key", baseURL, retry: policy });
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
	const events: ProviderEvent[] = [];
	for await (const event of stream) events.push(event);
	return events;
}

async function run(target: Provider, request: ModelRequest, options?: StreamOptions): Promise<ProviderEvent[]> {
	return collect(target.stream(request, options));
}

function last(events: ProviderEvent[]): ProviderEvent {
	const event = events[events.length - 1];
	if (!event) throw new Error("no events");
	return event;
}

function doneOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: "done" }> {
	const event = last(events);
	if (event.type !== "done") throw new Error(`expected done, got ${JSON.stringify(event)}`);
	return event;
}

function errorOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: "error" }>["error"] {
	const event = last(events);
	if (event.type !== "error") throw new Error(`expected error, got ${JSON.stringify(event)}`);
	expect(events.filter((item) => item.type === "done")).toEqual([]);
	return event.error;
}

describe("Anthropic provider against the fake Messages API", () => {
	const answer: ScriptStep = {
		text: "Let me read both files.",
		toolCalls: [
			{ id: "toolu_1", name: "read_file", arguments: '{"path": "a.ts"}' },
			{ id: "toolu_2", name: "read_file", arguments: '{"path":"b.ts","lines":[1,20]}' },
		],
	};

	it("assembles streamed deltas into the same result as the non-streaming call", async () => {
		const streamingFake = await fake(answer);
		const completeFake = await fake(answer);
		const streamed = await run(provider(streamingFake.anthropicBaseURL), REQUEST);
		const complete = await run(provider(completeFake.anthropicBaseURL), REQUEST, { stream: false });

		expect(streamingFake.requests[0]?.stream).toBe(true);
		expect(completeFake.requests[0]?.stream).toBe(false);
		const done = doneOf(streamed);
		expect(done).toEqual(doneOf(complete));
		expect(done.message).toEqual({
			role: "assistant",
			text: "Let me read both files.",
			toolCalls: [
				{ id: "toolu_1", name: "read_file", arguments: '{"path":"a.ts"}' },
				{ id: "toolu_2", name: "read_file", arguments: '{"path":"b.ts","lines":[1,20]}' },
			],
		});
		expect(done.stopReason).toBe("tool_calls");

		// Live events: the text in several deltas, each call announced (id, name) then its JSON in pieces.
		const textDeltas = streamed.flatMap((event) => (event.type === "text-delta" ? [event.text] : []));
		expect(textDeltas.length).toBeGreaterThan(1);
		expect(textDeltas.join("")).toBe(done.message.text);
		for (const [index, call] of done.message.toolCalls.entries()) {
			const deltas = streamed.flatMap((event) =>
				event.type === "tool-call-delta" && event.index === index ? [event] : [],
			);
			expect(deltas[0]).toMatchObject({ id: call.id, name: call.name });
			expect(deltas.map((delta) => delta.argumentsDelta).join("")).toBe(call.arguments);
		}
		expect(streamed.flatMap((event) => (event.type === "tool-call" ? [event.call] : []))).toEqual(
			done.message.toolCalls,
		);
		expect(streamed.slice(-2).map((event) => event.type)).toEqual(["usage", "done"]);
		expect(complete.map((event) => event.type)).toEqual(["usage", "done"]);
	});

	it("runs a two-round tool exchange with tool_use and tool_result on the wire and the prefix cache hit", async () => {
		const server = await fake(
			{ toolCalls: [{ id: "toolu_9", name: "read_file", arguments: '{"path":"a.ts"}' }] },
			{ text: "a.ts exports a." },
		);
		const target = provider(server.anthropicBaseURL);
		const first = doneOf(await run(target, REQUEST));
		expect(first.stopReason).toBe("tool_calls");
		const [call] = first.message.toolCalls;
		if (!call) throw new Error("no tool call");

		const followUp: ModelRequest = {
			...REQUEST,
			messages: [
				...REQUEST.messages,
				first.message,
				{ role: "tool", toolCallId: call.id, toolName: call.name, content: "export const a = 1;", isError: false },
			],
		};
		const second = doneOf(await run(target, followUp));
		expect(second.message).toEqual({ role: "assistant", text: "a.ts exports a.", toolCalls: [] });
		expect(second.stopReason).toBe("stop");

		const [firstRequest, secondRequest] = server.requests;
		if (!firstRequest || !secondRequest) throw new Error("requests missing");
		// The key travels in a header (this SDK version sends it as a bearer token).
		expect(Object.values(secondRequest.headers).some((value) => value.includes("test-key"))).toBe(true);
		expect(secondRequest.body.messages).toEqual([
			{ role: "user", content: [{ type: "text", text: "What is in a.ts?" }] },
			{ role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "read_file", input: { path: "a.ts" } }] },
			{
				role: "user",
				content: [
					{
						type: "tool_result",
						tool_use_id: "toolu_9",
						content: "export const a = 1;",
						cache_control: { type: "ephemeral" },
					},
				],
			},
		]);
		expect(countCacheBreakpoints(firstRequest.body)).toBeLessThanOrEqual(4);
		expect(countCacheBreakpoints(secondRequest.body)).toBeLessThanOrEqual(4);

		// Anthropic's input_tokens excludes cache reads and writes; Usage.input is the whole prompt.
		expect(first.usage).toMatchObject({ input: firstRequest.promptTokens, cacheRead: 0 });
		expect(first.usage.cacheWrite).toBe(firstRequest.promptTokens);
		expect(second.usage.cacheRead).toBe(firstRequest.promptTokens);
		expect(second.usage.input).toBe(secondRequest.promptTokens);
		expect(second.usage.cacheWrite).toBe(secondRequest.promptTokens - firstRequest.promptTokens);
		expect(second.usage.raw).toMatchObject({ cache_read_input_tokens: firstRequest.promptTokens });
	});

	it("retries a 429 with retry-after 0, announcing it, then succeeds", async () => {
		const server = await fake({ status: 429, headers: { "retry-after": "0" } }, { text: "ok" });
		const events = await run(provider(server.anthropicBaseURL), REQUEST);
		const types = events.map((event) => event.type);
		expect(types[0]).toBe("retry");
		expect(types.slice(1, -2).every((type) => type === "text-delta")).toBe(true);
		expect(types.slice(-2)).toEqual(["usage", "done"]);
		expect(events[0]).toMatchObject({ type: "retry", attempt: 2, delayMs: 0 });
		expect(doneOf(events).message.text).toBe("ok");
		expect(server.requests).toHaveLength(2);
	});

	it("reports 529 overloaded as a server error once the policy is exhausted", async () => {
		const server = await fake({ status: 529 }, { status: 529 });
		const events = await run(provider(server.anthropicBaseURL, { ...POLICY, maxAttempts: 2 }), REQUEST);
		expect(events.map((event) => event.type)).toEqual(["retry", "error"]);
		expect(errorOf(events)).toMatchObject({ kind: "server", status: 529 });
		expect(server.requests).toHaveLength(2);
	});

	it("reports 401 as auth naming ANTHROPIC_API_KEY, without retrying", async () => {
		const server = await fake({ status: 401 });
		const error = errorOf(await run(provider(server.anthropicBaseURL), REQUEST));
		expect(error.kind).toBe("auth");
		expect(error.message).toContain("ANTHROPIC_API_KEY");
		expect(server.requests).toHaveLength(1);
	});

	it('reports a 400 "prompt is too long" as context_length', async () => {
		const body = JSON.stringify({
			type: "error",
			error: { type: "invalid_request_error", message: "prompt is too long: 214000 tokens > 200000 maximum" },
		});
		const server = await fake({ status: 400, body });
		const error = errorOf(await run(provider(server.anthropicBaseURL), REQUEST));
		expect(error).toMatchObject({ kind: "context_length", status: 400 });
		expect(error.message).toContain("prompt is too long");
	});

	it("reports a body that is not JSON or not SSE as malformed, streaming or not", async () => {
		const server = await fake({ malformed: true }, { malformed: true });
		const target = provider(server.anthropicBaseURL);
		expect(errorOf(await run(target, REQUEST)).kind).toBe("malformed");
		expect(errorOf(await run(target, REQUEST, { stream: false })).kind).toBe("malformed");
	});

	it("reports a stream cut in the middle as malformed, after the text that did arrive", async () => {
		const server = await fake({ cut: true, text: "Partial answ" }, { cut: true });
		const target = provider(server.anthropicBaseURL);
		const events = await run(target, REQUEST);
		const error = errorOf(events);
		expect(error.kind).toBe("malformed");
		const received = events.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("");
		expect("Partial answ".startsWith(received)).toBe(true);
		expect(errorOf(await run(target, REQUEST, { stream: false })).kind).toBe("malformed");
	});

	it("reports an abort while waiting for the answer as aborted", async () => {
		const server = await fake({ delayMs: 60_000, then: { text: "too late" } });
		const controller = new AbortController();
		const pending = run(provider(server.anthropicBaseURL), REQUEST, { signal: controller.signal });
		await vi.waitFor(() => expect(server.requests).toHaveLength(1), { timeout: 10_000, interval: 5 });
		controller.abort();
		expect(errorOf(await pending).kind).toBe("aborted");
	});

	it("reports an already-aborted signal without sending anything", async () => {
		const server = await fake({ text: "unused" });
		const controller = new AbortController();
		controller.abort();
		const events = await run(provider(server.anthropicBaseURL), REQUEST, { signal: controller.signal });
		expect(errorOf(events).kind).toBe("aborted");
		expect(server.requests).toHaveLength(0);
	});
});

describe("Anthropic provider, failures the fake cannot script", () => {
	it("reports a refused connection as network after retrying", async () => {
		const closed = createServer();
		const port = await new Promise<number>((resolve) =>
			closed.listen(0, "127.0.0.1", () => resolve((closed.address() as AddressInfo).port)),
		);
		await new Promise<void>((resolve) => closed.close(() => resolve()));
		const events = await run(provider(`http://127.0.0.1:${port}`, { ...POLICY, maxAttempts: 2 }), REQUEST);
		expect(events.map((event) => event.type)).toEqual(["retry", "error"]);
		expect(errorOf(events).kind).toBe("network");
	});

	it("classifies an SSE error event (overloaded mid-stream) by its error type", async () => {
		const server = createServer((_request, response) => {
			response.writeHead(200, { "content-type": "text/event-stream" });
			const start = {
				type: "message_start",
				message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], usage: {} },
			};
			response.write(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`);
			const error = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
			response.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
		});
		const port = await new Promise<number>((resolve) =>
			server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
		);
		try {
			const events = await run(provider(`http://127.0.0.1:${port}`, { ...POLICY, maxAttempts: 1 }), REQUEST);
			const error = errorOf(events);
			expect(error.kind).toBe("server");
			expect(error.message).toContain("Overloaded");
		} finally {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		}
	});
});
