import type { Message, ToolResultMessage } from "../llm/types.js";

/** The result text for a call whose result never reached the transcript (a crash, a kill, an abort). */
export const UNFINISHED_RESULT = "(no result was recorded for this call; it did not finish)";

/**
 * The transcript as a provider will accept it. Pure; the input is not mutated.
 * - Every assistant tool call is answered exactly once, right after its assistant message, in call order;
 *   a call without a recorded result gets an error result with UNFINISHED_RESULT.
 * - Results that answer no call of the assistant message before them (orphans, duplicates) are dropped.
 * - Every other message keeps its place.
 */
export function repairTranscript(messages: readonly Message[]): Message[] {
	const repaired: Message[] = [];
	for (let index = 0; index < messages.length; index++) {
		const message = messages[index] as Message;
		if (message.role === "tool") continue; // results are placed with their assistant message below
		repaired.push(message);
		if (message.role !== "assistant" || message.toolCalls.length === 0) continue;
		const results = new Map<string, ToolResultMessage>();
		let next = index + 1;
		for (; next < messages.length; next++) {
			const candidate = messages[next] as Message;
			if (candidate.role !== "tool") break;
			if (!results.has(candidate.toolCallId)) results.set(candidate.toolCallId, candidate);
		}
		for (const call of message.toolCalls) {
			repaired.push(
				results.get(call.id) ?? {
					role: "tool",
					toolCallId: call.id,
					toolName: call.name,
					content: UNFINISHED_RESULT,
					isError: true,
				},
			);
		}
		index = next - 1;
	}
	return repaired;
}
