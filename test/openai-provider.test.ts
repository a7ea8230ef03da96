import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider, type OpenAIProviderOptions } from "../src/llm/openai.js";
import type { RetryPolicy } from "../src/llm/retry.js";
import type { ModelRequest, ProviderEvent, StreamOptions } from "../src/llm/types.js";
import { type FakeProvider, type ScriptStep, startFakeProvider } from "./support/fake-provider.js";

const TINY_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

const TOOLS = [
	{
		name: "read_file",
		description: "Read a file",
		parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
	},
];

function ask(text: string): ModelRequest {
	return {
		system: [
			{ tier: "stable", text: "You are snowpea." },
			{ tier: "volatile", text: "Today is Monday." },
		],
		tools: TOOLS,
		messages: [{ role: "user", content: [{ type: "text", text }] }],
	};
}

async function collect(events: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
	const all: ProviderEvent[] = [];
	for await (const event of events) all.push(event);
	return all;
}

function last(events: ProviderEvent[]): ProviderEvent | undefined {
	return events[events.length - 1];
}

function errorOf(events: ProviderEvent[]) {
	const final = last(events);
	if (final?.type !== "error") throw new Error(`expected a final error event, got ${JSON.stringify(final)}`);
	return final.error;
}

function doneOf(events: ProviderEvent[]) {
	const final = last(events);
	if (final?.type !== "done") throw new Error(`expected a final done event, got ${JSON.stringify(final)}`);
	return final;
}

let fake: FakeProvider;

beforeEach(async () => {
	fake = await startFakeProvider();
});

afterEach(async () => {
	await fake.close();
});

function provider(options: Partial<OpenAIProviderOptions> = {}) {
	return createOpenAIProvider({
		model: "gpt-test",
		apiKey: "test-key",
		baseURL: fake.openaiBaseURL,
		retry: TINY_RETRY,
		...options,
	});
}

async function run(step: ScriptStep | ScriptStep[], request = ask("hello"), options: StreamOptions = {}) {
	fake.push(...(Array.isArray(step) ? step : [step]));
	return collect(provider().stream(request, options));
}

describe("OpenAI provider against the fake", () => {
	it("streams text deltas and assembles them into the same answer as the non-streaming call", async () => {
		const answer: ScriptStep = {
			text: "Let me read that file for you.",
			toolCalls: [
				{ id: "call_a", name: "read_file", arguments: '{"path":"src/index.ts"}' },
				{ id: "call_b", name: "read_file", arguments: '{"path":"b"}' },
			],
		};
		const streamed = await run(answer);
		const whole = await run(answer, ask("hello"), { stream: false });

		expect(fake.requests.map((request) => request.stream)).toEqual([true, false]);
		const done = doneOf(streamed);
		const other = doneOf(whole);
		expect(other.message).toEqual(done.message);
		expect(other.stopReason).toBe(done.stopReason);
		// Same prompt, same answer: only the cache figures differ (the second request hits the first's prefix).
		expect({ ...other.usage, cacheRead: 0, raw: {} }).toEqual({ ...done.usage, raw: {} });
		expect(done.message).toEqual({
			role: "assistant",
			text: "Let me read that file for you.",
			toolCalls: [
				{ id: "call_a", name: "read_file", arguments: '{"path":"src/index.ts"}' },
				{ id: "call_b", name: "read_file", arguments: '{"path":"b"}' },
			],
		});
		expect(done.stopReason).toBe("tool_calls");

		const textDeltas = streamed.flatMap((event) => (event.type === "text-delta" ? [event.text] : []));
		expect(textDeltas.length).toBeGreaterThan(1);
		expect(textDeltas.join("")).toBe("Let me read that file for you.");
		const argumentPieces = streamed.flatMap((event) =>
			event.type === "tool-call-delta" && event.index === 0 ? [event.argumentsDelta] : [],
		);
		expect(argumentPieces.length).toBeGreaterThan(1);
		expect(argumentPieces.join("")).toBe('{"path":"src/index.ts"}');
		expect(streamed.filter((event) => event.type === "tool-call").map((event) => event.type)).toHaveLength(2);
		// Order: content, then tool-call, usage, done.
		expect(streamed.slice(-4).map((event) => event.type)).toEqual(["tool-call", "tool-call", "usage", "done"]);
	});

	it("sends the assistant tool call and the tool result back in the second round", async () => {
		fake.push(
			{ toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' }] },
			{ text: "The file says hi." },
		);
		const model = provider();
		const first = ask("what is in a.txt?");
		const round1 = doneOf(await collect(model.stream(first, { sessionId: "s-1" })));
		expect(round1.stopReason).toBe("tool_calls");

		const second: ModelRequest = {
			...first,
			messages: [
				...first.messages,
				round1.message,
				{ role: "tool", toolCallId: "call_1", toolName: "read_file", content: "hi", isError: false },
			],
		};
		const round2 = doneOf(await collect(model.stream(second, { sessionId: "s-1" })));
		expect(round2.message.text).toBe("The file says hi.");
		expect(round2.stopReason).toBe("stop");

		const body = fake.requests[1]?.body;
		expect(body?.messages).toEqual([
			{ role: "system", content: "You are snowpea.\n\nToday is Monday." },
			{ role: "user", content: "what is in a.txt?" },
			{
				role: "assistant",
				content: null,
				tool_calls: [
					{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
				],
			},
			{ role: "tool", tool_call_id: "call_1", content: "hi" },
		]);
		expect(body?.tools).toEqual([{ type: "function", function: TOOLS[0] }]);
		// The second request extends the first byte for byte, so the provider's prefix cache covers all of it.
		expect(fake.requests[1]?.cachedTokens).toBe(fake.requests[0]?.promptTokens);
		expect(round2.usage.cacheRead).toBe(fake.requests[0]?.promptTokens);
		expect(round2.usage.input).toBe(fake.requests[1]?.promptTokens);
	});

	it("records prompt_cache_key from the session id, and the bearer key", async () => {
		await run({ text: "ok" }, ask("hello"), { sessionId: "session-42" });
		expect(fake.requests[0]?.body.prompt_cache_key).toBe("session-42");
		expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
		expect(fake.requests[0]?.headers.authorization).toBe("Bearer test-key");
	});

	it("sends max_tokens only when maxOutputTokens is set", async () => {
		fake.push({ text: "a" }, { text: "b" }, { text: "c" });
		await collect(provider().stream(ask("hello")));
		await collect(provider({ maxOutputTokens: 256 }).stream(ask("hello")));
		await collect(provider({ maxOutputTokens: 256 }).stream({ ...ask("hello"), maxOutputTokens: 64 }));
		expect("max_tokens" in (fake.requests[0]?.body ?? {})).toBe(false);
		expect(fake.requests[1]?.body.max_tokens).toBe(256);
		expect(fake.requests[2]?.body.max_tokens).toBe(64);
	});

	it("normalizes usage with cacheRead from the provider's cached tokens", async () => {
		const first = await run({ text: "one", outputTokens: 3 });
		const second = await run({ text: "two", outputTokens: 4 }, ask("hello"), { stream: false });
		const [request1, request2] = fake.requests;
		expect(doneOf(first).usage).toMatchObject({
			input: request1?.promptTokens,
			output: 3,
			cacheRead: 0,
			cacheWrite: 0,
		});
		expect(request2?.cachedTokens).toBeGreaterThan(0);
		expect(doneOf(second).usage).toMatchObject({
			input: request2?.promptTokens,
			output: 4,
			cacheRead: request2?.cachedTokens,
			cacheWrite: 0,
		});
		const usageEvent = first.find((event) => event.type === "usage");
		expect(usageEvent?.type === "usage" && usageEvent.usage.raw).toMatchObject({
			prompt_tokens: request1?.promptTokens,
			completion_tokens: 3,
		});
	});

	it("retries a 429 with retry-after: 0 and then answers", async () => {
		const events = await run([{ status: 429, headers: { "retry-after": "0" } }, { text: "after the wait" }]);
		const retry = events.find((event) => event.type === "retry");
		expect(retry).toMatchObject({ type: "retry", attempt: 2, delayMs: 0 });
		expect(events.findIndex((event) => event.type === "retry")).toBeLessThan(events.length - 1);
		expect(doneOf(events).message.text).toBe("after the wait");
		expect(fake.requests).toHaveLength(2);
	});

	it("gives up with kind server after a 500 on every attempt", async () => {
		const events = await run([{ status: 500 }, { status: 500 }, { status: 500 }, { text: "too late" }]);
		expect(events.filter((event) => event.type === "retry")).toHaveLength(TINY_RETRY.maxAttempts - 1);
		const error = errorOf(events);
		expect(error.kind).toBe("server");
		expect(error.status).toBe(500);
		expect(fake.requests).toHaveLength(TINY_RETRY.maxAttempts);
	});

	it("reports a 401 as kind auth naming OPENAI_API_KEY, without retrying", async () => {
		const events = await run({ status: 401 });
		const error = errorOf(events);
		expect(error.kind).toBe("auth");
		expect(error.message).toContain("OPENAI_API_KEY");
		expect(events.some((event) => event.type === "retry")).toBe(false);
		expect(fake.requests).toHaveLength(1);
	});

	it("reports a 400 about the maximum context length as kind context_length", async () => {
		const body = JSON.stringify({
			error: {
				message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
				type: "invalid_request_error",
				param: "messages",
				code: "context_length_exceeded",
			},
		});
		const error = errorOf(await run({ status: 400, body }));
		expect(error.kind).toBe("context_length");
		expect(error.status).toBe(400);
	});

	it("reports any other 400 as bad_request with the provider's words", async () => {
		const body = JSON.stringify({
			error: { message: "Unknown parameter: 'frobnicate'.", type: "invalid_request_error" },
		});
		const error = errorOf(await run({ status: 400, body }));
		expect(error.kind).toBe("bad_request");
		expect(error.message).toContain("Unknown parameter: 'frobnicate'.");
	});

	it.each([true, false])("reports a body that is not JSON as malformed (stream: %s)", async (stream) => {
		const events = await run({ malformed: true }, ask("hello"), { stream });
		const error = errorOf(events);
		expect(error.kind).toBe("malformed");
		expect(error.message).toMatch(/JSON/);
		expect(events.some((event) => event.type === "done")).toBe(false);
	});

	it("reports a stream cut in the middle as malformed after the text it did send", async () => {
		const events = await run({ cut: true, text: "partial answ" });
		expect(events.filter((event) => event.type === "text-delta").map((event) => event.type)).toHaveLength(1);
		const error = errorOf(events);
		expect(error.kind).toBe("malformed");
		expect(error.message).toMatch(/cut|ended/);
		expect(events.some((event) => event.type === "done")).toBe(false);
	});

	it("reports a non-streaming body cut in the middle as malformed", async () => {
		const error = errorOf(await run({ cut: true, text: "partial" }, ask("hello"), { stream: false }));
		expect(error.kind).toBe("malformed");
	});

	it("reports an abort while waiting for the answer as kind aborted", async () => {
		const controller = new AbortController();
		const waiting = await startFakeProvider({
			respond: () => {
				// The request has arrived; the caller gives up while the server is still thinking.
				controller.abort();
				return { delayMs: 60_000, then: { text: "never" } };
			},
		});
		try {
			const model = createOpenAIProvider({
				model: "gpt-test",
				apiKey: "k",
				baseURL: waiting.openaiBaseURL,
				retry: TINY_RETRY,
			});
			const events = await collect(model.stream(ask("hello"), { signal: controller.signal }));
			expect(errorOf(events).kind).toBe("aborted");
			expect(events.some((event) => event.type === "retry")).toBe(false);
			expect(events.some((event) => event.type === "done")).toBe(false);
			expect(waiting.requests).toHaveLength(1);
		} finally {
			await waiting.close();
		}
	});

	it("reports an abort in the middle of a stream as kind aborted", async () => {
		fake.push({ text: "a long answer in several pieces" });
		const controller = new AbortController();
		const events: ProviderEvent[] = [];
		for await (const event of provider().stream(ask("hello"), { signal: controller.signal })) {
			events.push(event);
			if (event.type === "text-delta") controller.abort();
		}
		expect(errorOf(events).kind).toBe("aborted");
		expect(events.some((event) => event.type === "done" || event.type === "retry")).toBe(false);
	});

	it("reports an already aborted signal without sending anything", async () => {
		const controller = new AbortController();
		controller.abort();
		const events = await run({ text: "unused" }, ask("hello"), { signal: controller.signal });
		expect(errorOf(events).kind).toBe("aborted");
		expect(events.some((event) => event.type === "retry")).toBe(false);
		expect(fake.requests).toHaveLength(0);
	});

	it("reports a refused connection as kind network after retrying", async () => {
		const closed = await startFakeProvider();
		const baseURL = closed.openaiBaseURL;
		await closed.close();
		const events = await collect(
			createOpenAIProvider({ model: "gpt-test", apiKey: "k", baseURL, retry: TINY_RETRY }).stream(ask("hello")),
		);
		expect(events.filter((event) => event.type === "retry")).toHaveLength(TINY_RETRY.maxAttempts - 1);
		expect(errorOf(events).kind).toBe("network");
		expect(errorOf(events).message).toContain(baseURL);
	});

	it("turns a request it cannot even build into an error event instead of throwing", async () => {
		const broken = { ...ask("hello"), system: undefined } as unknown as ModelRequest;
		const events = await collect(provider().stream(broken));
		expect(errorOf(events).kind).toBe("unknown");
		expect(fake.requests).toHaveLength(0);
	});

	it("notices an exhausted script instead of hanging", async () => {
		const error = errorOf(await collect(provider({ retry: { ...TINY_RETRY, maxAttempts: 1 } }).stream(ask("hello"))));
		expect(error.kind).toBe("server");
		expect(error.message).toContain("script exhausted");
	});
});

describe("OpenAI provider configuration from the environment", () => {
	const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };

	afterEach(() => {
		restore("OPENAI_API_KEY", saved.key);
		restore("OPENAI_BASE_URL", saved.url);
	});

	function restore(name: string, value: string | undefined) {
		if (value === undefined) delete process.env[name];
		else process.env[name] = value;
	}

	it("reads OPENAI_BASE_URL and OPENAI_API_KEY", async () => {
		process.env.OPENAI_BASE_URL = fake.openaiBaseURL;
		process.env.OPENAI_API_KEY = "from-env";
		fake.push({ text: "ok" });
		const events = await collect(createOpenAIProvider({ model: "gpt-test", retry: TINY_RETRY }).stream(ask("hi")));
		expect(doneOf(events).message.text).toBe("ok");
		expect(fake.requests[0]?.headers.authorization).toBe("Bearer from-env");
	});

	it("sends the key not-set when no key is configured (local servers accept any key)", async () => {
		delete process.env.OPENAI_API_KEY;
		fake.push({ text: "ok" });
		await collect(provider({ apiKey: undefined }).stream(ask("hi")));
		expect(fake.requests[0]?.headers.authorization).toBe("Bearer not-set");
	});
});

/** A one-shot server on 127.0.0.1 that answers every request with the given SSE text, for shapes the fake never sends. */
async function withRawStream(sse: string, body: (baseURL: string) => Promise<void>): Promise<void> {
	const server = createServer((request, response) => {
		request.resume();
		request.on("end", () => {
			response.writeHead(200, { "content-type": "text/event-stream" });
			response.end(sse);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	try {
		await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
	} finally {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	}
}

function chunk(choices: unknown[]): string {
	return `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices })}\n\n`;
}

describe("OpenAI provider against unusual streams", () => {
	it("reports a stream that ends cleanly but without a finish_reason as malformed, not as an empty answer", async () => {
		const sse = `${chunk([{ index: 0, delta: { role: "assistant", content: "half an" }, finish_reason: null }])}data: [DONE]\n\n`;
		await withRawStream(sse, async (baseURL) => {
			const events = await collect(
				createOpenAIProvider({ model: "m", apiKey: "k", baseURL, retry: TINY_RETRY }).stream(ask("hello")),
			);
			const error = errorOf(events);
			expect(error.kind).toBe("malformed");
			expect(error.message).toContain("finish_reason");
			expect(events.some((event) => event.type === "done")).toBe(false);
		});
	});

	it("reports an error object sent inside the stream with the status it names", async () => {
		const sse = `data: ${JSON.stringify({ error: { code: 401, message: "No auth credentials found" } })}\n\n`;
		await withRawStream(sse, async (baseURL) => {
			const events = await collect(
				createOpenAIProvider({ model: "m", apiKey: "k", baseURL, retry: TINY_RETRY }).stream(ask("hello")),
			);
			const error = errorOf(events);
			expect(error.kind).toBe("auth");
			expect(error.message).toContain("No auth credentials found");
		});
	});

	it("finishes tool calls from a server that leaves out the arguments and says stop", async () => {
		const sse = [
			chunk([
				{
					index: 0,
					delta: {
						role: "assistant",
						tool_calls: [{ index: 0, id: "t1", type: "function", function: { name: "bash" } }],
					},
					finish_reason: null,
				},
			]),
			chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
			"data: [DONE]\n\n",
		].join("");
		await withRawStream(sse, async (baseURL) => {
			const events = await collect(
				createOpenAIProvider({ model: "m", apiKey: "k", baseURL, retry: TINY_RETRY }).stream(ask("hello")),
			);
			const done = doneOf(events);
			expect(done.message.toolCalls).toEqual([{ id: "t1", name: "bash", arguments: "{}" }]);
			expect(done.stopReason).toBe("tool_calls");
			expect(done.usage).toMatchObject({ input: 0, output: 0, cacheRead: 0 });
			expect(events.some((event) => event.type === "usage")).toBe(false);
		});
	});
});
