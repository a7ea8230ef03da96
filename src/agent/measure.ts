import { estimateTokens } from "../context/tokens.js";
import type { Message, ModelRequest, SystemSegment, ToolDefinition } from "../llm/types.js";
import type { ContextReport, PartSize } from "./events.js";

// Sizes are remembered per object: a transcript's messages, a session's system prompt and an unchanged tool list
// are the same objects round after round, so each is measured once however many rounds re-send it.
const measured = new WeakMap<object, PartSize>();

function size(text: string): PartSize {
	return { bytes: Buffer.byteLength(text), tokens: estimateTokens(text) };
}

function remembered(key: object, render: () => string, extraTokens = 0): PartSize {
	const known = measured.get(key);
	if (known) return known;
	const rendered = size(render());
	const result = { bytes: rendered.bytes, tokens: rendered.tokens + extraTokens };
	measured.set(key, result);
	return result;
}

function add(a: PartSize, b: PartSize): PartSize {
	return { bytes: a.bytes + b.bytes, tokens: a.tokens + b.tokens };
}

const ZERO: PartSize = { bytes: 0, tokens: 0 };

/**
 * What the images a message refers to cost a provider: about width × height / 750 tokens each (Anthropic's rule; the
 * stored copy is at most 1,568 px on its long edge). The transcript holds only a reference, so its JSON alone would
 * count an image as a few dozen tokens.
 */
function imageTokens(message: Message): number {
	if (message.role !== "user") return 0;
	let tokens = 0;
	for (const part of message.content)
		if (part.type === "image-ref") tokens += Math.ceil((part.ref.width * part.ref.height) / 750);
	return tokens;
}

export function measureSystem(system: readonly SystemSegment[]): PartSize {
	return remembered(system, () => system.map((segment) => segment.text).join("\n\n"));
}

export function measureTools(tools: readonly ToolDefinition[]): PartSize {
	return remembered(tools, () => JSON.stringify(tools));
}

/**
 * Bytes and tokens of messages as JSON, and of the tool results among them (their text's UTF-8 bytes — the figure
 * the context engine's budget counts — and the tokens of those messages).
 */
export function measureMessages(messages: readonly Message[]): PartSize & { toolResults: PartSize } {
	let total = ZERO;
	let toolResults = ZERO;
	for (const message of messages) {
		const part = remembered(message, () => JSON.stringify(message), imageTokens(message));
		total = add(total, part);
		if (message.role === "tool")
			toolResults = add(toolResults, { bytes: Buffer.byteLength(message.content), tokens: part.tokens });
	}
	return { ...total, toolResults };
}

/** What a request carries, by part, in bytes and estimated tokens (tool results are a subset of messages). */
export function measureRequest(request: ModelRequest, round: number): ContextReport {
	const system = measureSystem(request.system);
	const tools = measureTools(request.tools);
	const { toolResults, ...messages } = measureMessages(request.messages);
	return { round, system, tools, messages, toolResults, total: add(add(system, tools), messages) };
}
