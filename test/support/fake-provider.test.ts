import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, type ScriptStep, startFakeProvider } from "./fake-provider.js";

let fake: FakeProvider | undefined;

afterEach(async () => {
	await fake?.close();
	fake = undefined;
});

async function start(script: ScriptStep[] = []): Promise<FakeProvider> {
	fake = await startFakeProvider({ script });
	return fake;
}

function openai(provider: FakeProvider): OpenAI {
	return new OpenAI({ apiKey: "test", baseURL: provider.openaiBaseURL, maxRetries: 0 });
}

function anthropic(provider: FakeProvider): Anthropic {
	return new Anthropic({ apiKey: "test", baseURL: provider.anthropicBaseURL, maxRetries: 0 });
}

/** Resolves once the provider has recorded `count` requests. */
async function arrivalOf(provider: FakeProvider, count: number): Promise<void> {
	while (provider.requests.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

const WEATHER_TOOL = {
	type: "function" as const,
	function: { name: "weather", description: "Weather for a city", parameters: { type: "object", properties: {} } },
};

describe("fake provider, OpenAI Chat Completions", () => {
	it("answers a non-streaming request with text and usage from the cache model", async () => {
		const provider = await start([{ text: "Hello there", outputTokens: 7 }]);
		const completion = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "hi" }],
		});
		expect(completion.choices[0]?.message.content).toBe("Hello there");
		expect(completion.choices[0]?.finish_reason).toBe("stop");
		expect(completion.model).toBe("gpt-test");
		// canonical prompt: "[]" + {"role":"user","content":"hi"} = 2 + 29 bytes
		const expectedPrompt = Math.floor(Buffer.byteLength('[]{"role":"user","content":"hi"}') / 4);
		expect(completion.usage).toEqual({
			prompt_tokens: expectedPrompt,
			completion_tokens: 7,
			total_tokens: expectedPrompt + 7,
			prompt_tokens_details: { cached_tokens: 0 },
		});
		expect(provider.requests).toHaveLength(1);
		expect(provider.requests[0]).toMatchObject({
			api: "openai",
			path: "/v1/chat/completions",
			stream: false,
			promptTokens: expectedPrompt,
			cachedTokens: 0,
		});
		expect(provider.requests[0]?.headers.authorization).toBe("Bearer test");
		expect(provider.requests[0]?.body.model).toBe("gpt-test");
		expect(JSON.parse(provider.requests[0]?.raw ?? "")).toEqual(provider.requests[0]?.body);
	});

	it("streams text in several deltas, then finish_reason, then a usage chunk when asked", async () => {
		const provider = await start([{ text: "The quick brown fox jumps" }]);
		const stream = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "go" }],
			stream: true,
			stream_options: { include_usage: true },
		});
		const contentPieces: string[] = [];
		const finishReasons: string[] = [];
		let usage: OpenAI.CompletionUsage | undefined | null;
		for await (const chunk of stream) {
			for (const choice of chunk.choices) {
				if (choice.delta.content) contentPieces.push(choice.delta.content);
				if (choice.finish_reason) finishReasons.push(choice.finish_reason);
			}
			if (chunk.usage) {
				expect(chunk.choices).toEqual([]);
				usage = chunk.usage;
			}
		}
		expect(contentPieces.join("")).toBe("The quick brown fox jumps");
		expect(contentPieces.length).toBeGreaterThan(1);
		expect(finishReasons).toEqual(["stop"]);
		// default output tokens: a quarter of the answer's bytes
		expect(usage?.completion_tokens).toBe(Math.floor(Buffer.byteLength("The quick brown fox jumps") / 4));
		expect(usage?.prompt_tokens).toBe(provider.requests[0]?.promptTokens);
		expect(provider.requests[0]?.stream).toBe(true);
	});

	it("sends no usage chunk when the request does not ask for it", async () => {
		const provider = await start([{ text: "hi" }]);
		const stream = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "go" }],
			stream: true,
		});
		const usages: unknown[] = [];
		for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
		expect(usages).toEqual([]);
	});

	it("streams tool calls whose arguments the SDK's stream helper assembles", async () => {
		const provider = await start([
			{
				toolCalls: [
					{ name: "weather", arguments: '{"city":"Paris","unit":"celsius"}' },
					{ id: "call_custom", name: "weather", arguments: '{"city":"Oslo"}' },
				],
			},
		]);
		const argumentPieces: string[] = [];
		const stream = openai(provider).chat.completions.stream({
			model: "gpt-test",
			messages: [{ role: "user", content: "weather?" }],
			tools: [WEATHER_TOOL],
		});
		stream.on("chunk", (chunk) => {
			for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
				if (call.index === 0) argumentPieces.push(call.function?.arguments ?? "");
			}
		});
		const completion = await stream.finalChatCompletion();
		const message = completion.choices[0]?.message;
		expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
		expect(message?.tool_calls?.map((call) => (call.type === "function" ? [call.id, call.function] : []))).toEqual([
			["call_1", { name: "weather", arguments: '{"city":"Paris","unit":"celsius"}' }],
			["call_custom", { name: "weather", arguments: '{"city":"Oslo"}' }],
		]);
		expect(argumentPieces.length).toBeGreaterThan(1);
	});

	it("returns tool calls without streaming, with null content and malformed arguments untouched", async () => {
		const provider = await start([{ toolCalls: [{ name: "weather", arguments: '{"city": "Par' }] }]);
		const completion = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "weather?" }],
			tools: [WEATHER_TOOL],
		});
		const message = completion.choices[0]?.message;
		expect(message?.content).toBeNull();
		const call = message?.tool_calls?.[0];
		expect(call?.type === "function" ? call.function.arguments : undefined).toBe('{"city": "Par');
		expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
	});

	it("reports stopReason length as finish_reason length", async () => {
		const provider = await start([{ text: "cut short", stopReason: "length" }]);
		const completion = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "go" }],
		});
		expect(completion.choices[0]?.finish_reason).toBe("length");
	});

	it("reports the previous request's whole prompt as cached when the next request extends it", async () => {
		const provider = await start([{ text: "first answer" }, { text: "second answer" }, { text: "other model" }]);
		const client = openai(provider);
		const firstMessages: OpenAI.ChatCompletionMessageParam[] = [
			{ role: "system", content: "You are a careful assistant. ".repeat(20) },
			{ role: "user", content: "first question" },
		];
		const first = await client.chat.completions.create({ model: "gpt-test", messages: firstMessages });
		const secondMessages: OpenAI.ChatCompletionMessageParam[] = [
			...firstMessages,
			{ role: "assistant", content: "first answer" },
			{ role: "user", content: "second question" },
		];
		const second = await client.chat.completions.create({ model: "gpt-test", messages: secondMessages });
		expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
		expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(first.usage?.prompt_tokens);
		expect(second.usage?.prompt_tokens).toBeGreaterThan(first.usage?.prompt_tokens ?? 0);

		const otherModel = await client.chat.completions.create({ model: "gpt-other", messages: secondMessages });
		expect(otherModel.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
		expect(provider.requests.map((request) => request.cachedTokens)).toEqual([0, first.usage?.prompt_tokens, 0]);
	});

	it("turns an error step into the SDK's error with that status and retry-after header", async () => {
		const provider = await start([{ status: 429, headers: { "retry-after": "0" } }]);
		const error = await openai(provider)
			.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(OpenAI.RateLimitError);
		const apiError = error as InstanceType<typeof OpenAI.APIError>;
		expect(apiError.status).toBe(429);
		expect(apiError.headers?.get("retry-after")).toBe("0");
		expect(apiError.message).toContain("fake provider");
		expect(provider.requests).toHaveLength(1);
	});

	it("sends a scripted error body verbatim", async () => {
		const body = JSON.stringify({ error: { message: "maximum context length exceeded", type: "x", code: null } });
		const provider = await start([{ status: 400, body }]);
		const error = await openai(provider)
			.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect((error as Error).message).toContain("maximum context length exceeded");
	});

	it("makes the SDK fail on a cut stream after the text that was sent", async () => {
		const provider = await start([{ cut: true, text: "partial" }]);
		const stream = await openai(provider).chat.completions.create({
			model: "gpt-test",
			messages: [{ role: "user", content: "go" }],
			stream: true,
		});
		const received: string[] = [];
		const outcome = await (async () => {
			for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? "");
			return "ended normally";
		})().catch((error: unknown) => error);
		expect(outcome).toBeInstanceOf(Error);
		expect(received.join("")).toBe("partial");
	});

	it("makes the SDK fail on a malformed body, streaming or not", async () => {
		const provider = await start([{ malformed: true }, { malformed: true }]);
		const client = openai(provider);
		const plain = await client.chat.completions
			.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
			.catch((error: unknown) => error);
		expect(plain).toBeInstanceOf(Error);
		const streamed = await client.chat.completions
			.stream({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
			.finalChatCompletion()
			.catch((error: unknown) => error);
		expect(streamed).toBeInstanceOf(Error);
	});

	it("answers HTTP 500 'script exhausted' when no step is left", async () => {
		const provider = await start([{ text: "only one" }]);
		const client = openai(provider);
		await client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "1" }] });
		const error = await client.chat.completions
			.create({ model: "gpt-test", messages: [{ role: "user", content: "2" }] })
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(OpenAI.InternalServerError);
		expect((error as Error).message).toContain("fake provider: script exhausted");
		expect(provider.requests).toHaveLength(2);
	});
});

describe("fake provider, Anthropic Messages", () => {
	it("answers a non-streaming request with text and parsed tool input", async () => {
		const provider = await start([
			{ text: "Let me check.", toolCalls: [{ id: "toolu_1", name: "weather", arguments: '{"city":"Paris"}' }] },
		]);
		const message = await anthropic(provider).messages.create({
			model: "claude-test",
			max_tokens: 100,
			messages: [{ role: "user", content: "weather?" }],
		});
		expect(message.type).toBe("message");
		expect(message.model).toBe("claude-test");
		expect(message.stop_reason).toBe("tool_use");
		expect(message.content).toEqual([
			{ type: "text", text: "Let me check." },
			{ type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
		]);
		expect(provider.requests[0]).toMatchObject({ api: "anthropic", path: "/v1/messages", stream: false });
		expect(provider.requests[0]?.headers["anthropic-version"]).toEqual(expect.any(String));
	});

	it("streams text and tool input that the SDK's stream helper assembles", async () => {
		const provider = await start([
			{
				text: "Checking the weather now",
				toolCalls: [{ name: "weather", arguments: '{"city":"Paris","days":3}' }],
				outputTokens: 11,
			},
		]);
		const stream = anthropic(provider).messages.stream({
			model: "claude-test",
			max_tokens: 100,
			messages: [{ role: "user", content: "weather?" }],
		});
		const textPieces: string[] = [];
		const jsonPieces: string[] = [];
		stream.on("text", (text) => textPieces.push(text));
		stream.on("inputJson", (partial) => jsonPieces.push(partial));
		const message = await stream.finalMessage();
		expect(message.content).toEqual([
			{ type: "text", text: "Checking the weather now" },
			{ type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris", days: 3 } },
		]);
		expect(message.stop_reason).toBe("tool_use");
		expect(message.usage.output_tokens).toBe(11);
		expect(textPieces.length).toBeGreaterThan(1);
		expect(jsonPieces.length).toBeGreaterThan(1);
	});

	it("streams an unparseable tool argument string as partial_json verbatim", async () => {
		const provider = await start([{ toolCalls: [{ name: "weather", arguments: '{"city": "Par' }] }]);
		const stream = await anthropic(provider).messages.create({
			model: "claude-test",
			max_tokens: 100,
			messages: [{ role: "user", content: "weather?" }],
			stream: true,
		});
		let json = "";
		for await (const event of stream) {
			if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") {
				json += event.delta.partial_json;
			}
		}
		expect(json).toBe('{"city": "Par');
	});

	it("reports max_tokens for stopReason length", async () => {
		const provider = await start([{ text: "cut", stopReason: "length" }]);
		const message = await anthropic(provider).messages.create({
			model: "claude-test",
			max_tokens: 1,
			messages: [{ role: "user", content: "go" }],
		});
		expect(message.stop_reason).toBe("max_tokens");
	});

	it("models the prefix cache: reads what the previous request wrote, ignoring cache_control markers", async () => {
		const provider = await start([{ text: "a1" }, { text: "a2" }, { text: "a3" }]);
		const client = anthropic(provider);
		const system = "You are a careful assistant. ".repeat(20);
		const firstMessages: Anthropic.MessageParam[] = [
			{ role: "user", content: [{ type: "text", text: "first question", cache_control: { type: "ephemeral" } }] },
		];
		const first = await client.messages.create({
			model: "claude-test",
			max_tokens: 100,
			system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
			messages: firstMessages,
		});
		const firstPrompt = provider.requests[0]?.promptTokens ?? 0;
		expect(firstPrompt).toBeGreaterThan(100);
		expect(first.usage).toMatchObject({
			input_tokens: 0,
			cache_creation_input_tokens: firstPrompt,
			cache_read_input_tokens: 0,
		});

		// The breakpoint moves to the new last message; the old marker disappears. The prefix is unchanged.
		const second = await client.messages.create({
			model: "claude-test",
			max_tokens: 100,
			system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
			messages: [
				{ role: "user", content: [{ type: "text", text: "first question" }] },
				{ role: "assistant", content: "a1" },
				{ role: "user", content: [{ type: "text", text: "second", cache_control: { type: "ephemeral" } }] },
			],
		});
		const secondPrompt = provider.requests[1]?.promptTokens ?? 0;
		expect(second.usage.cache_read_input_tokens).toBe(firstPrompt);
		expect(second.usage.cache_creation_input_tokens).toBe(secondPrompt - firstPrompt);
		expect(second.usage.input_tokens).toBe(0);

		// A changed system prompt breaks the cache right after the (empty) tools.
		const third = await client.messages.create({
			model: "claude-test",
			max_tokens: 100,
			system: `Changed. ${system}`,
			messages: [{ role: "user", content: "first question" }],
		});
		expect(third.usage.cache_read_input_tokens).toBeLessThan(5);
		// no cache_control anywhere: nothing is written, everything is plain input
		expect(third.usage.cache_creation_input_tokens).toBe(0);
		expect(third.usage.input_tokens).toBe(
			(provider.requests[2]?.promptTokens ?? 0) - (third.usage.cache_read_input_tokens ?? 0),
		);
	});

	it("reports cache usage in message_start of a stream", async () => {
		const provider = await start([{ text: "a1" }, { text: "a2" }]);
		const client = anthropic(provider);
		const messages: Anthropic.MessageParam[] = [{ role: "user", content: "hello ".repeat(50) }];
		await client.messages.create({ model: "claude-test", max_tokens: 10, system: "sys", messages });
		const stream = client.messages.stream({
			model: "claude-test",
			max_tokens: 10,
			system: "sys",
			messages: [...messages, { role: "assistant", content: "a1" }, { role: "user", content: "more" }],
		});
		const final = await stream.finalMessage();
		expect(final.usage.cache_read_input_tokens).toBe(provider.requests[0]?.promptTokens);
		expect(final.usage.input_tokens).toBe(
			(provider.requests[1]?.promptTokens ?? 0) - (provider.requests[0]?.promptTokens ?? 0),
		);
	});

	it("turns a 429 step into the SDK's rate limit error carrying retry-after", async () => {
		const provider = await start([{ status: 429, headers: { "retry-after": "0" } }]);
		const error = await anthropic(provider)
			.messages.create({ model: "claude-test", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(Anthropic.RateLimitError);
		const apiError = error as InstanceType<typeof Anthropic.APIError>;
		expect(apiError.status).toBe(429);
		expect(apiError.headers?.get("retry-after")).toBe("0");
		expect(apiError.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
	});

	it("makes the SDK fail on a cut stream", async () => {
		const provider = await start([{ cut: true, text: "partial" }]);
		const stream = anthropic(provider).messages.stream({
			model: "claude-test",
			max_tokens: 10,
			messages: [{ role: "user", content: "go" }],
		});
		const received: string[] = [];
		stream.on("text", (text) => received.push(text));
		const outcome = await stream.finalMessage().catch((error: unknown) => error);
		expect(outcome).toBeInstanceOf(Error);
		expect(received.join("")).toBe("partial");
	});

	it("answers HTTP 500 'script exhausted' when no step is left", async () => {
		const provider = await start();
		const error = await anthropic(provider)
			.messages.create({ model: "claude-test", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(Anthropic.InternalServerError);
		expect((error as Error).message).toContain("fake provider: script exhausted");
	});
});

describe("fake provider, scripting", () => {
	it("asks respond when the script is empty and takes pushed steps first", async () => {
		const seen: number[] = [];
		fake = await startFakeProvider({
			respond: (request, index) => {
				seen.push(index);
				return { text: `answer ${index} to ${request.api}` };
			},
		});
		const client = openai(fake);
		const ask = async () =>
			(await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "q" }] })).choices[0]
				?.message.content;
		expect(await ask()).toBe("answer 0 to openai");
		fake.push({ text: "pushed" });
		expect(await ask()).toBe("pushed");
		expect(await ask()).toBe("answer 2 to openai");
		expect(seen).toEqual([0, 2]);
	});

	it("lets the client abort during a delay and keeps serving afterwards", async () => {
		const provider = await start([{ delayMs: 600_000, then: { text: "too late" } }, { text: "next" }]);
		const client = openai(provider);
		const controller = new AbortController();
		const pending = client.chat.completions
			.create({ model: "m", messages: [{ role: "user", content: "slow" }] }, { signal: controller.signal })
			.catch((error: unknown) => error);
		await arrivalOf(provider, 1);
		controller.abort();
		expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
		const next = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "fast" }] });
		expect(next.choices[0]?.message.content).toBe("next");
	});

	it("answers after a short delay", async () => {
		const provider = await start([{ delayMs: 20, then: { delayMs: 1, then: { text: "waited" } } }]);
		const completion = await openai(provider).chat.completions.create({
			model: "m",
			messages: [{ role: "user", content: "q" }],
		});
		expect(completion.choices[0]?.message.content).toBe("waited");
	});

	it("closes while a delayed answer is pending, without waiting for it", async () => {
		const provider = await startFakeProvider({ script: [{ delayMs: 600_000, then: { text: "never" } }] });
		const pending = openai(provider)
			.chat.completions.create({ model: "m", messages: [{ role: "user", content: "q" }] })
			.catch((error: unknown) => error);
		await arrivalOf(provider, 1);
		await provider.close();
		expect(await pending).toBeInstanceOf(Error);
	});
});
