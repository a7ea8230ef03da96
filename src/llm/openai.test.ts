import type { ChatCompletion } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { fromOpenAICompletion, normalizeOpenAIUsage, toOpenAIRequest } from "./openai.js";
import type { ModelRequest } from "./types.js";

const PNG = "iVBORw0KGgo=";

const request: ModelRequest = {
	system: [
		{ tier: "stable", text: "You are snowpea." },
		{ tier: "context", text: "Project: demo" },
		{ tier: "volatile", text: "Today is Monday." },
	],
	tools: [
		{
			name: "read_file",
			description: "Read a file",
			parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
		},
		{ name: "bash", description: "Run a command", parameters: { type: "object", properties: {} } },
	],
	messages: [
		{ role: "user", content: [{ type: "text", text: "hello" }] },
		{
			role: "user",
			content: [
				{ type: "text", text: "what is in this picture?" },
				{ type: "image", mime: "image/png", data: PNG },
			],
		},
		{
			role: "assistant",
			text: "",
			toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' }],
		},
		{ role: "tool", toolCallId: "call_1", toolName: "read_file", content: "contents of a", isError: false },
		{ role: "assistant", text: "Done.", toolCalls: [] },
	],
};

function completion(message: Record<string, unknown>, finishReason: string, usage?: Record<string, unknown>) {
	return {
		id: "chatcmpl-1",
		object: "chat.completion",
		created: 1,
		model: "gpt-test",
		choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, finish_reason: finishReason }],
		...(usage ? { usage } : {}),
	} as unknown as ChatCompletion;
}

describe("toOpenAIRequest", () => {
	it("translates system tiers, an image, a tool call and a tool result into the exact wire body", () => {
		const wire = toOpenAIRequest(request, "gpt-test", { stream: true, sessionId: "session-1" });
		expect(JSON.stringify(wire)).toBe(
			JSON.stringify({
				model: "gpt-test",
				messages: [
					{ role: "system", content: "You are snowpea.\n\nProject: demo\n\nToday is Monday." },
					{ role: "user", content: "hello" },
					{
						role: "user",
						content: [
							{ type: "text", text: "what is in this picture?" },
							{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
						],
					},
					{
						role: "assistant",
						content: null,
						tool_calls: [
							{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
						],
					},
					{ role: "tool", tool_call_id: "call_1", content: "contents of a" },
					{ role: "assistant", content: "Done." },
				],
				tools: [
					{
						type: "function",
						function: {
							name: "read_file",
							description: "Read a file",
							parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
						},
					},
					{
						type: "function",
						function: { name: "bash", description: "Run a command", parameters: { type: "object", properties: {} } },
					},
				],
				stream: true,
				stream_options: { include_usage: true },
				prompt_cache_key: "session-1",
			}),
		);
	});

	it("skips empty system segments instead of leaving stray separators", () => {
		const wire = toOpenAIRequest(
			{
				system: [
					{ tier: "stable", text: "Rules." },
					{ tier: "context", text: "" },
					{ tier: "volatile", text: "" },
				],
				tools: [],
				messages: [],
			},
			"m",
			{ stream: false },
		);
		expect(wire.messages).toEqual([{ role: "system", content: "Rules." }]);
	});

	it("is byte-stable: the same request serializes to the same bytes", () => {
		const first = JSON.stringify(toOpenAIRequest(request, "gpt-test", { stream: true }));
		const second = JSON.stringify(toOpenAIRequest(structuredClone(request), "gpt-test", { stream: true }));
		expect(second).toBe(first);
	});

	it("omits tools, the system message, stream options, max_tokens and prompt_cache_key when there is nothing to send", () => {
		const wire = toOpenAIRequest(
			{ system: [], tools: [], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
			"local-model",
			{ stream: false },
		);
		expect(wire).toEqual({ model: "local-model", messages: [{ role: "user", content: "hi" }] });
	});

	it("sends max_tokens and temperature only when the request sets them", () => {
		const wire = toOpenAIRequest(
			{ system: [], tools: [], messages: [], maxOutputTokens: 512, temperature: 0.2 },
			"local-model",
			{ stream: false },
		);
		expect(wire.max_tokens).toBe(512);
		expect(wire.temperature).toBe(0.2);
		expect("max_completion_tokens" in wire).toBe(false);
	});

	it("sends several text parts as an array", () => {
		const wire = toOpenAIRequest(
			{
				system: [],
				tools: [],
				messages: [
					{
						role: "user",
						content: [
							{ type: "text", text: "a" },
							{ type: "text", text: "b" },
						],
					},
				],
			},
			"m",
			{ stream: false },
		);
		expect(wire.messages[0]).toEqual({
			role: "user",
			content: [
				{ type: "text", text: "a" },
				{ type: "text", text: "b" },
			],
		});
	});
});

describe("fromOpenAICompletion", () => {
	it("turns a text answer into the canonical message with normalized usage", () => {
		const result = fromOpenAICompletion(
			completion({ content: "Hello there." }, "stop", {
				prompt_tokens: 120,
				completion_tokens: 7,
				total_tokens: 127,
				prompt_tokens_details: { cached_tokens: 100 },
			}),
		);
		expect(result.message).toEqual({ role: "assistant", text: "Hello there.", toolCalls: [] });
		expect(result.stopReason).toBe("stop");
		expect(result.usage).toMatchObject({ input: 120, output: 7, cacheRead: 100, cacheWrite: 0 });
	});

	it("turns tool calls into canonical calls in order, empty arguments becoming {}", () => {
		const result = fromOpenAICompletion(
			completion(
				{
					content: null,
					tool_calls: [
						{ id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"x"}' } },
						{ id: "call_b", type: "function", function: { name: "bash", arguments: "" } },
					],
				},
				"tool_calls",
			),
		);
		expect(result.message).toEqual({
			role: "assistant",
			text: "",
			toolCalls: [
				{ id: "call_a", name: "read_file", arguments: '{"path":"x"}' },
				{ id: "call_b", name: "bash", arguments: "{}" },
			],
		});
		expect(result.stopReason).toBe("tool_calls");
		expect(result.usage).toMatchObject({ input: 0, output: 0, cacheRead: 0 });
	});

	it("keeps malformed arguments exactly as the model wrote them", () => {
		const result = fromOpenAICompletion(
			completion(
				{ content: null, tool_calls: [{ id: "c", type: "function", function: { name: "bash", arguments: '{"a":' } }] },
				"tool_calls",
			),
		);
		expect(result.message.toolCalls[0]?.arguments).toBe('{"a":');
	});

	it.each([
		["stop", "stop"],
		["length", "length"],
		["tool_calls", "tool_calls"],
		["function_call", "tool_calls"],
		["content_filter", "content_filter"],
	])("maps finish_reason %s to %s", (finishReason, stopReason) => {
		expect(fromOpenAICompletion(completion({ content: "x" }, finishReason)).stopReason).toBe(stopReason);
	});

	it("says tool_calls when a server reports stop after calling a tool", () => {
		const result = fromOpenAICompletion(
			completion(
				{ content: null, tool_calls: [{ id: "c", type: "function", function: { name: "bash", arguments: "{}" } }] },
				"stop",
			),
		);
		expect(result.stopReason).toBe("tool_calls");
	});

	it("round-trips: an answer translated back to the wire is the assistant message that was received", () => {
		const wireMessage = {
			role: "assistant",
			content: "Let me look.",
			tool_calls: [{ id: "call_9", type: "function", function: { name: "read_file", arguments: '{"path":"b"}' } }],
		};
		const { message } = fromOpenAICompletion(completion(wireMessage, "tool_calls"));
		const wire = toOpenAIRequest({ system: [], tools: [], messages: [message] }, "m", { stream: false });
		expect(wire.messages).toEqual([wireMessage]);
	});
});

describe("normalizeOpenAIUsage", () => {
	it("counts cached tokens as a subset of the prompt and keeps the raw object", () => {
		const raw = {
			prompt_tokens: 50,
			completion_tokens: 5,
			total_tokens: 55,
			prompt_tokens_details: { cached_tokens: 32 },
		};
		expect(normalizeOpenAIUsage(raw)).toEqual({ input: 50, output: 5, cacheRead: 32, cacheWrite: 0, raw });
	});

	it("uses DeepSeek's prompt_cache_hit_tokens when cached_tokens is absent", () => {
		const raw = {
			prompt_tokens: 80,
			completion_tokens: 3,
			total_tokens: 83,
			prompt_cache_hit_tokens: 64,
			prompt_cache_miss_tokens: 16,
		};
		expect(normalizeOpenAIUsage(raw)).toMatchObject({ input: 80, output: 3, cacheRead: 64, cacheWrite: 0 });
	});

	it("gives zeros for a missing usage object", () => {
		expect(normalizeOpenAIUsage(undefined)).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, raw: {} });
		expect(normalizeOpenAIUsage(null)).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, raw: {} });
	});
});
