import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage } from "../llm/types.js";
import { MISSING_RESULT_CONTENT, repairTranscript } from "./transcript.js";

function user(text: string): UserMessage {
	return { role: "user", content: [{ type: "text", text }] };
}

function assistant(...ids: string[]): AssistantMessage {
	return { role: "assistant", text: "", toolCalls: ids.map((id) => ({ id, name: `tool_${id}`, arguments: "{}" })) };
}

function result(id: string, content = `output of ${id}`): ToolResultMessage {
	return { role: "tool", toolCallId: id, toolName: `tool_${id}`, content, isError: false };
}

function missing(id: string): ToolResultMessage {
	return { role: "tool", toolCallId: id, toolName: `tool_${id}`, content: MISSING_RESULT_CONTENT, isError: true };
}

describe("repairTranscript", () => {
	it("answers the calls a killed turn never finished, after the results that were recorded", () => {
		const input = [user("go"), assistant("a", "b", "c"), result("a")];
		expect(repairTranscript(input)).toEqual([
			user("go"),
			assistant("a", "b", "c"),
			result("a"),
			missing("b"),
			missing("c"),
		]);
		expect(missing("b").content).toBe("(no result was recorded for this call; it did not finish)");
	});

	it("answers a call with no result before the next user or assistant message", () => {
		const input = [assistant("a"), user("never mind"), assistant("b"), result("b"), assistant()];
		expect(repairTranscript(input)).toEqual([
			assistant("a"),
			missing("a"),
			user("never mind"),
			assistant("b"),
			result("b"),
			assistant(),
		]);
	});

	it("drops results that answer no earlier call, a second result for a call, and results after the next turn", () => {
		const input = [
			result("early"),
			user("hi"),
			assistant("a"),
			result("a"),
			result("unknown"),
			result("a", "again"),
			assistant("b"),
			result("a", "late"),
			result("b"),
		];
		expect(repairTranscript(input)).toEqual([user("hi"), assistant("a"), result("a"), assistant("b"), result("b")]);
	});

	it("puts results in call order and brings a result recorded after a user message back to its call", () => {
		const input = [assistant("a", "b", "c"), result("c"), user("also check the docs"), result("a")];
		expect(repairTranscript(input)).toEqual([
			assistant("a", "b", "c"),
			result("a"),
			missing("b"),
			result("c"),
			user("also check the docs"),
		]);
	});

	it("returns a well-paired transcript unchanged, as a new array, without touching the input", () => {
		const input = deepFreeze([user("go"), assistant("a", "b"), result("a"), result("b"), user("thanks")]);
		const copy = structuredClone(input);
		const output = repairTranscript(input);
		expect(output).toEqual(copy);
		expect(output).not.toBe(input);
		expect(repairTranscript([])).toEqual([]);
	});
});

// Property tests. Call ids are unique across a transcript (as providers make them); results pick ids from the
// calls anywhere in the transcript, or ids no call has.
const callIds = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,3}$/), { maxLength: 12 });

interface Plan {
	kind: "user" | "assistant" | "tool";
	calls: number;
	pick: number;
	stranger: boolean;
}

const plans = fc.array(
	fc.record({
		kind: fc.constantFrom<Plan["kind"]>("user", "assistant", "tool", "tool"),
		calls: fc.nat({ max: 3 }),
		pick: fc.nat(),
		stranger: fc.boolean(),
	}),
	{ maxLength: 25 },
);

/** A transcript of arbitrary shape: results may be missing, duplicated, early, late, out of order or unknown. */
const transcripts = fc.tuple(callIds, plans).map(([ids, steps]) => {
	const remaining = [...ids];
	const messages: Message[] = [];
	steps.forEach((step, index) => {
		if (step.kind === "user") messages.push(user(`u${index}`));
		else if (step.kind === "assistant") messages.push(assistant(...remaining.splice(0, step.calls)));
		else {
			const id = step.stranger || ids.length === 0 ? `zz${step.pick % 5}` : (ids[step.pick % ids.length] as string);
			messages.push(result(id, `r${index}`));
		}
	});
	return messages;
});

/** A transcript that is already well paired: each assistant's results follow it at once, in call order. */
const wellPaired = fc
	.tuple(callIds, fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 3 })), { maxLength: 15 }))
	.map(([ids, steps]) => {
		const remaining = [...ids];
		return steps.flatMap(([isUser, calls], index): Message[] => {
			if (isUser) return [user(`u${index}`)];
			const turn = assistant(...remaining.splice(0, calls));
			return [turn, ...turn.toolCalls.map((call) => result(call.id, `r${index}`))];
		});
	});

/** Every tool message sits in the block right after an assistant message, answering its calls in order. */
function expectWellPaired(messages: Message[]): void {
	let index = 0;
	while (index < messages.length) {
		const message = messages[index] as Message;
		expect(message.role).not.toBe("tool");
		index++;
		if (message.role !== "assistant") continue;
		for (const call of message.toolCalls) {
			const answer = messages[index];
			expect(answer?.role).toBe("tool");
			expect((answer as ToolResultMessage).toolCallId).toBe(call.id);
			index++;
		}
	}
}

/** The input messages from `start` up to (not including) the next assistant message. */
function segmentAfter(messages: Message[], start: number): Message[] {
	const end = messages.findIndex((message, index) => index > start && message.role === "assistant");
	return messages.slice(start + 1, end === -1 ? undefined : end);
}

describe("repairTranscript properties", () => {
	it("always answers each assistant's calls exactly once, in call order, right after it", () => {
		fc.assert(
			fc.property(transcripts, (input) => {
				expectWellPaired(repairTranscript(input));
			}),
		);
	});

	it("keeps every user and assistant message in order and uses the first recorded result for each call", () => {
		fc.assert(
			fc.property(transcripts, (input) => {
				const output = repairTranscript(input);
				const others = (messages: Message[]) => messages.filter((message) => message.role !== "tool");
				expect(others(output)).toHaveLength(others(input).length);
				others(output).forEach((message, index) => {
					expect(message).toBe(others(input)[index]);
				});
				input.forEach((message, position) => {
					if (message.role !== "assistant") return;
					const answers = output.slice(
						output.indexOf(message) + 1,
						output.indexOf(message) + 1 + message.toolCalls.length,
					);
					message.toolCalls.forEach((call: ToolCall, index) => {
						const recorded = segmentAfter(input, position).find(
							(candidate) => candidate.role === "tool" && candidate.toolCallId === call.id,
						);
						if (recorded) expect(answers[index]).toBe(recorded);
						else
							expect(answers[index]).toEqual({
								role: "tool",
								toolCallId: call.id,
								toolName: call.name,
								content: MISSING_RESULT_CONTENT,
								isError: true,
							});
					});
				});
			}),
		);
	});

	it("never mutates its input and is idempotent", () => {
		fc.assert(
			fc.property(transcripts, (input) => {
				const copy = structuredClone(input);
				const output = repairTranscript(deepFreeze(input));
				expect(input).toEqual(copy);
				expect(repairTranscript(output)).toEqual(output);
			}),
		);
	});

	it("leaves an already well-paired transcript as it is", () => {
		fc.assert(
			fc.property(wellPaired, (input) => {
				expect(repairTranscript(input)).toEqual(input);
			}),
		);
	});
});

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object") {
		for (const child of Object.values(value)) deepFreeze(child);
		Object.freeze(value);
	}
	return value;
}
