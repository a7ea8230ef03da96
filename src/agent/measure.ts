import { estimateTokens } from "../context/tokens.js";
import type { Message, ModelRequest } from "../llm/types.js";
import type { ContextReport, PartSize } from "./events.js";

// Rendered size of each message, remembered per message object: a transcript's messages never change, so each is
// measured once however many rounds re-send it.
const measured = new WeakMap<Message, PartSize>();

function size(text: string): PartSize {
	return { bytes: Buffer.byteLength(text), tokens: estimateTokens(text) };
}

function messageSize(message: Message): PartSize {
	const known = measured.get(message);
	if (known) return known;
	const result = size(JSON.stringify(message));
	measured.set(message, result);
	return result;
}

function add(a: PartSize, b: PartSize): PartSize {
	return { bytes: a.bytes + b.bytes, tokens: a.tokens + b.tokens };
}

const ZERO: PartSize = { bytes: 0, tokens: 0 };

/** What a request carries, by part, in bytes and estimated tokens (tool results are a subset of messages). */
export function measureRequest(request: ModelRequest, round: number): ContextReport {
	const system = size(request.system.map((segment) => segment.text).join("\n\n"));
	const tools = size(JSON.stringify(request.tools));
	let messages = ZERO;
	let toolResults = ZERO;
	for (const message of request.messages) {
		const part = messageSize(message);
		messages = add(messages, part);
		if (message.role === "tool") toolResults = add(toolResults, part);
	}
	return { round, system, tools, messages, toolResults, total: add(add(system, tools), messages) };
}
