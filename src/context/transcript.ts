import type { AssistantMessage, Message, ToolResultMessage } from "../llm/types.js";

/** The content of a result made up for a call whose real result was never recorded. */
export const MISSING_RESULT_CONTENT = "(no result was recorded for this call; it did not finish)";

/**
 * Returns `messages` as a provider will accept them. Pure: the input array and its messages are not mutated
 * (unchanged messages are shared, not copied).
 *
 * - Right after each assistant message come the results of its tool calls, one per call, in call order.
 *   A call's result is the first result with its id recorded after that assistant message and before the next
 *   one; a call without one gets a made-up result (content {@link MISSING_RESULT_CONTENT}, isError true) in its
 *   call's place — so when a turn was cut off, the made-up results follow the recorded ones. A result recorded
 *   after a user message (a person typed while the tool ran) moves up to sit with its call.
 * - Tool results that answer no call of the assistant message before them are dropped: results before any
 *   assistant message, results for an unknown id, second results for a call, and results that arrive after the
 *   next assistant message (their call was already answered).
 * - Every user and assistant message is kept, in its original order.
 * A transcript that is already well paired comes back equal to the input.
 */
export function repairTranscript(messages: Message[]): Message[] {
	const output: Message[] = [];
	let index = 0;
	// Messages before the first assistant message: nothing there can be answered.
	while (index < messages.length && messages[index]?.role !== "assistant") {
		const message = messages[index] as Message;
		if (message.role !== "tool") output.push(message);
		index++;
	}
	while (index < messages.length) {
		const assistant = messages[index] as AssistantMessage;
		let end = index + 1;
		while (end < messages.length && messages[end]?.role !== "assistant") end++;
		output.push(assistant, ...answerCalls(assistant, messages.slice(index + 1, end)));
		for (const message of messages.slice(index + 1, end)) if (message.role !== "tool") output.push(message);
		index = end;
	}
	return output;
}

/** One result per call of `assistant`, in call order, taken from the messages that follow it. */
function answerCalls(assistant: AssistantMessage, following: Message[]): ToolResultMessage[] {
	const results = following.filter((message): message is ToolResultMessage => message.role === "tool");
	const used = new Set<number>();
	return assistant.toolCalls.map((call) => {
		const found = results.findIndex((result, position) => !used.has(position) && result.toolCallId === call.id);
		if (found >= 0) {
			used.add(found);
			return results[found] as ToolResultMessage;
		}
		return { role: "tool", toolCallId: call.id, toolName: call.name, content: MISSING_RESULT_CONTENT, isError: true };
	});
}
