import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
	CACHE_LOOKBACK_BLOCKS,
	canonicalArguments,
	countCacheBreakpoints,
	createAnthropicProvider,
	fromAnthropicMessage,
	mapStopReason,
	messageBreakpointPositions,
	normalizeAnthropicUsage,
	toAnthropicRequest,
} from "./anthropic.js";
import type { Message, ModelRequest, ProviderEvent, SystemSegment, ToolDefinition } from "./types.js";

const EPHEMERAL = { type: "ephemeral" };

const READ_FILE: ToolDefinition = {
	name: "read_file",
	description: "Read a file",
	parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const VIEW_IMAGE: ToolDefinition = {
	name: "view_image",
	description: "Look at an image",
	parameters: { type: "object", properties: { path: { type: "string" } } },
};

/** Every content block of the messages, in order. */
function blocksOf(wire: { messages: { content: unknown }[] }): Record<string, unknown>[] {
	return wire.messages.flatMap((message) => message.content as Record<string, unknown>[]);
}

/** Prefix lengths (in message content blocks) of the blocks that carry a cache_control marker. */
function messageBreakpoints(wire: { messages: { content: unknown }[] }): number[] {
	return blocksOf(wire).flatMap((block, index) => (block.cache_control ? [index + 1] : []));
}

function withoutMarkers(value: unknown): unknown {
	return JSON.parse(JSON.stringify(value, (key, inner) => (key === "cache_control" ? undefined : inner)));
}

describe("toAnthropicRequest", () => {
	const request: ModelRequest = {
		system: [
			{ tier: "stable", text: "You are snowpea." },
			{ tier: "stable", text: "" },
			{ tier: "context", text: "Project: demo" },
			{ tier: "volatile", text: "Today is Monday." },
		],
		tools: [READ_FILE, VIEW_IMAGE],
		messages: [
			{
				role: "user",
				content: [
					{ type: "text", text: "Fix the bug" },
					{ type: "image", mime: "image/png", data: "iVBORw0KGgo=" },
				],
			},
			{
				role: "assistant",
				text: "Looking.",
				toolCalls: [
					{ id: "call_1", name: "read_file", arguments: '{"path": "a.ts"}' },
					{ id: "call_2", name: "view_image", arguments: '{"path":"shot.png"}' },
					{ id: "call_3", name: "read_file", arguments: '{"path": "b.ts"' },
				],
			},
			{ role: "tool", toolCallId: "call_1", toolName: "read_file", content: "export const a = 1;", isError: false },
			{ role: "tool", toolCallId: "call_2", toolName: "view_image", content: "image attached", isError: false },
			{ role: "tool", toolCallId: "call_3", toolName: "read_file", content: "malformed arguments", isError: true },
			{ role: "user", content: [{ type: "image", mime: "image/jpeg", data: "/9j/4AAQ" }] },
			{ role: "assistant", text: "Done.", toolCalls: [] },
			{ role: "user", content: [{ type: "text", text: "Thanks" }] },
			{ role: "user", content: [{ type: "text", text: "One more thing" }] },
		],
		temperature: 0.2,
	};

	it("maps every part of a canonical request onto the Messages API, merging turns so roles alternate", () => {
		const wire = toAnthropicRequest(request, "claude-test", { stream: true, maxTokens: 8192 });
		expect(wire).toEqual({
			model: "claude-test",
			max_tokens: 8192,
			system: [
				{ type: "text", text: "You are snowpea." },
				{ type: "text", text: "Project: demo", cache_control: EPHEMERAL },
				{ type: "text", text: "Today is Monday." },
			],
			tools: [
				{ name: "read_file", description: "Read a file", input_schema: READ_FILE.parameters },
				{
					name: "view_image",
					description: "Look at an image",
					input_schema: VIEW_IMAGE.parameters,
					cache_control: EPHEMERAL,
				},
			],
			messages: [
				{
					role: "user",
					content: [
						{ type: "text", text: "Fix the bug" },
						{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
					],
				},
				{
					role: "assistant",
					content: [
						{ type: "text", text: "Looking." },
						{ type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.ts" } },
						{ type: "tool_use", id: "call_2", name: "view_image", input: { path: "shot.png" } },
						{ type: "tool_use", id: "call_3", name: "read_file", input: {} },
					],
				},
				{
					role: "user",
					content: [
						{ type: "tool_result", tool_use_id: "call_1", content: "export const a = 1;" },
						{ type: "tool_result", tool_use_id: "call_2", content: "image attached" },
						{ type: "tool_result", tool_use_id: "call_3", content: "malformed arguments", is_error: true },
						{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQ" } },
					],
				},
				{ role: "assistant", content: [{ type: "text", text: "Done." }] },
				{
					role: "user",
					content: [
						{ type: "text", text: "Thanks" },
						{ type: "text", text: "One more thing", cache_control: EPHEMERAL },
					],
				},
			],
			temperature: 0.2,
			stream: true,
		});
		expect(countCacheBreakpoints(wire)).toBe(3);
	});

	it("is byte-stable and leaves the canonical request untouched", () => {
		const before = structuredClone(request);
		const first = JSON.stringify(toAnthropicRequest(request, "claude-test", { stream: true, maxTokens: 8192 }));
		const second = JSON.stringify(toAnthropicRequest(request, "claude-test", { stream: true, maxTokens: 8192 }));
		expect(second).toBe(first);
		expect(request).toEqual(before);
	});

	it("differs between streaming and not only in the stream flag", () => {
		const streaming = toAnthropicRequest(request, "claude-test", { stream: true, maxTokens: 100 });
		const complete = toAnthropicRequest(request, "claude-test", { stream: false, maxTokens: 100 });
		expect(complete.stream).toBe(false);
		expect({ ...complete, stream: true }).toEqual(streaming);
	});

	it("prefers the request's maxOutputTokens over the adapter default", () => {
		const wire = toAnthropicRequest({ ...request, maxOutputTokens: 512 }, "m", { stream: true, maxTokens: 8192 });
		expect(wire.max_tokens).toBe(512);
	});

	it("leaves out an empty system prompt, an empty tool list and an assistant turn that said nothing", () => {
		const wire = toAnthropicRequest(
			{
				system: [{ tier: "stable", text: "" }],
				tools: [],
				messages: [
					{ role: "user", content: [{ type: "text", text: "hi" }] },
					{ role: "assistant", text: "", toolCalls: [] },
					{ role: "user", content: [{ type: "text", text: "hello?" }] },
				],
			},
			"m",
			{ stream: false, maxTokens: 10 },
		);
		expect(wire).not.toHaveProperty("system");
		expect(wire).not.toHaveProperty("tools");
		expect(wire).not.toHaveProperty("temperature");
		expect(wire.messages).toEqual([
			{
				role: "user",
				content: [
					{ type: "text", text: "hi" },
					{ type: "text", text: "hello?", cache_control: EPHEMERAL },
				],
			},
		]);
	});

	it("puts no system breakpoint when the whole system prompt is volatile", () => {
		const wire = toAnthropicRequest(
			{
				system: [{ tier: "volatile", text: "now" }],
				tools: [],
				messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
			},
			"m",
			{ stream: true, maxTokens: 10 },
		);
		expect(wire.system).toEqual([{ type: "text", text: "now" }]);
		expect(countCacheBreakpoints(wire)).toBe(1);
	});

	it("adds ttl 1h to every marker when asked, and nothing but the type otherwise", () => {
		const markers = (wire: unknown): unknown[] => {
			const found: unknown[] = [];
			JSON.stringify(wire, (key, value) => {
				if (key === "cache_control") found.push(value);
				return value;
			});
			return found;
		};
		const long = conversation(Array.from({ length: 8 }, () => 2));
		const hour = toAnthropicRequest(long, "m", { stream: true, maxTokens: 10, cacheTtl: "1h" });
		expect(markers(hour)).toHaveLength(4);
		for (const marker of markers(hour)) expect(marker).toEqual({ type: "ephemeral", ttl: "1h" });
		const minutes = toAnthropicRequest(long, "m", { stream: true, maxTokens: 10, cacheTtl: "5m" });
		expect(markers(minutes)).toHaveLength(4);
		for (const marker of markers(minutes)) expect(marker).toEqual(EPHEMERAL);
	});
});

/**
 * A conversation as the agent loop grows it: a prompt, then per round an assistant turn calling `calls[i]` tools in
 * parallel (a plain answer when 0) and their results; rounds listed in `images` also get a view_image-style user
 * message after the results.
 */
function conversation(calls: number[], images: ReadonlySet<number> = new Set()): ModelRequest {
	const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Start" }] }];
	calls.forEach((count, round) => {
		const toolCalls = Array.from({ length: count }, (_, index) => ({
			id: `call_${round}_${index}`,
			name: "read_file",
			arguments: JSON.stringify({ path: `file-${round}-${index}.ts` }),
		}));
		messages.push({ role: "assistant", text: round % 2 === 0 ? `Round ${round}` : "", toolCalls });
		for (const call of toolCalls) {
			messages.push({
				role: "tool",
				toolCallId: call.id,
				toolName: call.name,
				content: `body of ${call.id}`,
				isError: false,
			});
		}
		if (count === 0) messages.push({ role: "user", content: [{ type: "text", text: `Next ${round}` }] });
		if (images.has(round))
			messages.push({ role: "user", content: [{ type: "image", mime: "image/png", data: "AAAA" }] });
	});
	const system: SystemSegment[] = [
		{ tier: "stable", text: "rules" },
		{ tier: "volatile", text: "clock" },
	];
	return { system, tools: [READ_FILE], messages };
}

describe("cache breakpoints", () => {
	it("mark the last tool, the end of the non-volatile system prompt, the last block and the block 15 from the end", () => {
		const request = conversation(Array.from({ length: 6 }, () => 3));
		const wire = toAnthropicRequest(request, "m", { stream: true, maxTokens: 10 });
		const total = blocksOf(wire).length;
		expect(total).toBeGreaterThan(16);
		expect(messageBreakpoints(wire)).toEqual([total - 15, total]);
		expect(wire.tools?.[0]).toHaveProperty("cache_control", EPHEMERAL);
		expect(wire.system).toEqual([
			{ type: "text", text: "rules", cache_control: EPHEMERAL },
			{ type: "text", text: "clock" },
		]);
		expect(countCacheBreakpoints(wire)).toBe(4);
	});

	it("uses a single message breakpoint while the messages are short", () => {
		expect(messageBreakpointPositions(0)).toEqual([]);
		expect(messageBreakpointPositions(1)).toEqual([1]);
		expect(messageBreakpointPositions(15)).toEqual([15]);
		expect(messageBreakpointPositions(16)).toEqual([1, 16]);
		expect(messageBreakpointPositions(100)).toEqual([85, 100]);
	});

	it("never places more than 4 markers, and always keeps roles alternating", () => {
		const text = fc.string({ maxLength: 6 });
		const part = fc.oneof(
			text.map((value) => ({ type: "text" as const, text: value })),
			fc.constant({ type: "image" as const, mime: "image/gif" as const, data: "R0lG" }),
		);
		const message: fc.Arbitrary<Message> = fc.oneof(
			fc.array(part, { maxLength: 3 }).map((content) => ({ role: "user" as const, content })),
			fc
				.record({ text, calls: fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }) })
				.map(({ text: said, calls }) => ({
					role: "assistant" as const,
					text: said,
					toolCalls: calls.map((raw, index) => ({ id: `c${index}`, name: "t", arguments: raw })),
				})),
			fc.record({ content: text, isError: fc.boolean() }).map(({ content, isError }) => ({
				role: "tool" as const,
				toolCallId: "c0",
				toolName: "t",
				content,
				isError,
			})),
		);
		const segment = fc.record({
			tier: fc.constantFrom("stable" as const, "context" as const, "volatile" as const),
			text,
		});
		const tool = fc.string({ minLength: 1, maxLength: 5 }).map((name) => ({ ...READ_FILE, name }));
		fc.assert(
			fc.property(
				fc.array(segment, { maxLength: 5 }),
				fc.array(tool, { maxLength: 4 }),
				fc.array(message, { maxLength: 60 }),
				fc.constantFrom("5m" as const, "1h" as const),
				(system, tools, messages, cacheTtl) => {
					const wire = toAnthropicRequest({ system, tools, messages }, "m", { stream: true, maxTokens: 10, cacheTtl });
					expect(countCacheBreakpoints(wire)).toBeLessThanOrEqual(4);
					wire.messages.forEach((turn, index) => {
						expect(Array.isArray(turn.content) && turn.content.length > 0).toBe(true);
						if (index > 0) expect(turn.role).not.toBe(wire.messages[index - 1]?.role);
					});
				},
			),
			{ numRuns: 300 },
		);
	});

	it("keep every growing request within the lookback of an entry its predecessor wrote", () => {
		// Rounds of up to 16 parallel calls (+ text, + an image turn): up to 34 new content blocks per request.
		const rounds = fc.array(fc.record({ calls: fc.integer({ min: 0, max: 16 }), image: fc.boolean() }), {
			minLength: 2,
			maxLength: 25,
		});
		fc.assert(
			fc.property(rounds, (plan) => {
				const calls = plan.map((round) => round.calls);
				const images = new Set(plan.flatMap((round, index) => (round.image ? [index] : [])));
				let previous: ReturnType<typeof toAnthropicRequest> | undefined;
				for (let length = 1; length <= plan.length; length++) {
					const request = conversation(calls.slice(0, length), images);
					const wire = toAnthropicRequest(request, "m", { stream: true, maxTokens: 10 });
					expect(countCacheBreakpoints(wire)).toBeLessThanOrEqual(4);
					if (previous) {
						// The new request extends the old one block for block, so the old entries are valid prefixes.
						const before = withoutMarkers(blocksOf(previous));
						const after = withoutMarkers(blocksOf(wire)) as unknown[];
						expect(after.slice(0, (before as unknown[]).length)).toEqual(before);
						const written = messageBreakpoints(previous);
						const reached = messageBreakpoints(wire).some((position) =>
							written.some((entry) => position >= entry && position - entry <= CACHE_LOOKBACK_BLOCKS),
						);
						expect(reached, `breakpoints ${messageBreakpoints(wire)} vs entries ${written}`).toBe(true);
					}
					previous = wire;
				}
			}),
			{ numRuns: 200 },
		);
	});

	it("still reaches the previous entry after a 35-block round, where a 10-block quantized rule would not", () => {
		// Previous request: 11 blocks. Next: 17 parallel calls → +35 blocks (text, 17 tool_use, 17 tool_result).
		const previous = messageBreakpointPositions(11);
		const next = messageBreakpointPositions(11 + 35);
		expect(previous).toEqual([11]);
		expect(next.some((position) => position >= 11 && position - 11 <= CACHE_LOOKBACK_BLOCKS)).toBe(true);
	});

	it("counts markers anywhere in a body", () => {
		expect(countCacheBreakpoints({})).toBe(0);
		expect(
			countCacheBreakpoints({
				tools: [{ cache_control: EPHEMERAL }],
				messages: [{ content: [{ type: "tool_result", content: [{ type: "text", cache_control: EPHEMERAL }] }] }],
				system: [{ cache_control: null }],
			}),
		).toBe(2);
	});
});

describe("fromAnthropicMessage", () => {
	it("turns text and tool_use blocks into one assistant message with canonical JSON arguments", () => {
		const answer = fromAnthropicMessage({
			content: [
				{ type: "thinking" },
				{ type: "text", text: "Reading both. " },
				{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.ts", range: [1, 2] } },
				{ type: "text", text: "Done" },
				{ type: "tool_use", id: "toolu_2", name: "list", input: {} },
			],
			stop_reason: "tool_use",
			usage: { input_tokens: 5, output_tokens: 7 },
		});
		expect(answer).toEqual({
			message: {
				role: "assistant",
				text: "Reading both. Done",
				toolCalls: [
					{ id: "toolu_1", name: "read_file", arguments: '{"path":"a.ts","range":[1,2]}' },
					{ id: "toolu_2", name: "list", arguments: "{}" },
				],
			},
			stopReason: "tool_calls",
			usage: { input: 5, output: 7, cacheRead: 0, cacheWrite: 0, raw: { input_tokens: 5, output_tokens: 7 } },
		});
	});

	it("maps every stop reason", () => {
		expect(mapStopReason("end_turn")).toBe("stop");
		expect(mapStopReason("stop_sequence")).toBe("stop");
		expect(mapStopReason("pause_turn")).toBe("stop");
		expect(mapStopReason("tool_use")).toBe("tool_calls");
		expect(mapStopReason("max_tokens")).toBe("length");
		expect(mapStopReason("refusal")).toBe("content_filter");
		expect(mapStopReason(null)).toBe("stop");
	});

	it("gives streamed and complete arguments the same canonical text", () => {
		expect(canonicalArguments('{ "path" : "a.ts",\n "n": 1 }')).toBe(JSON.stringify({ path: "a.ts", n: 1 }));
		expect(canonicalArguments("")).toBe("{}");
		expect(canonicalArguments('{"path": "a.ts"')).toBe('{"path": "a.ts"');
	});
});

describe("normalizeAnthropicUsage", () => {
	it("counts cache reads and writes into the prompt total", () => {
		const raw = {
			input_tokens: 10,
			cache_read_input_tokens: 1000,
			cache_creation_input_tokens: 200,
			output_tokens: 42,
		};
		expect(normalizeAnthropicUsage(raw)).toEqual({ input: 1210, output: 42, cacheRead: 1000, cacheWrite: 200, raw });
	});

	it("treats missing and null cache figures as zero", () => {
		const raw = { input_tokens: 10, cache_read_input_tokens: null, output_tokens: 3 };
		expect(normalizeAnthropicUsage(raw)).toEqual({ input: 10, output: 3, cacheRead: 0, cacheWrite: 0, raw });
		expect(normalizeAnthropicUsage(undefined)).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, raw: {} });
	});
});

describe("createAnthropicProvider without a key", () => {
	afterEach(() => {
		vi.unstubAllEnvs();
	});

	it("does not throw and reports an auth error naming ANTHROPIC_API_KEY", async () => {
		vi.stubEnv("ANTHROPIC_API_KEY", "");
		const provider = createAnthropicProvider({ model: "claude-test", baseURL: "http://127.0.0.1:9" });
		expect(provider.name).toBe("anthropic");
		expect(provider.model).toBe("claude-test");
		const events: ProviderEvent[] = [];
		for await (const event of provider.stream({ system: [], tools: [], messages: [] })) events.push(event);
		expect(events).toHaveLength(1);
		const [event] = events;
		expect(event?.type).toBe("error");
		if (event?.type !== "error") return;
		expect(event.error.kind).toBe("auth");
		expect(event.error.message).toContain("ANTHROPIC_API_KEY");
	});
});
