import type { RequestSegments } from "../context/cost.js";
import type { Message } from "../llm/types.js";
import { TOOL_SCHEMAS } from "./tool-schemas.js";

// A request as the prefix cache sees it: the tool schemas, the system prompt, then one JSON text per message, in the
// provider's prefix order. A message is serialized once per message object: unchanged history (the projection shares
// unchanged messages and freezes each placeholder message) is never serialized or tokenized again.

const serialized = new WeakMap<Message, string>();

/** The JSON text of one message (memoized per message object). */
export function messageSegment(message: Message): string {
	let text = serialized.get(message);
	if (text === undefined) {
		text = JSON.stringify(message);
		serialized.set(message, text);
	}
	return text;
}

/** `[TOOL_SCHEMAS, system, ...messages as JSON]`. */
export function requestSegments(system: string, messages: readonly Message[]): string[] {
	const segments = new Array<string>(messages.length + 2);
	segments[0] = TOOL_SCHEMAS;
	segments[1] = system;
	for (let index = 0; index < messages.length; index++)
		segments[index + 2] = messageSegment(messages[index] as Message);
	return segments;
}

/**
 * True when `current` changes something `previous` sent (a segment before the end of `previous` differs, or is
 * gone): the request rewrote history and the provider's cache cannot reuse the prefix past that point. Appending
 * never counts. Independent of TTL and provider granularity.
 */
export function rewritesHistory(previous: RequestSegments | undefined, current: RequestSegments): boolean {
	if (!previous) return false;
	if (current.length < previous.length) return true;
	for (let index = 0; index < previous.length; index++) if (previous[index] !== current[index]) return true;
	return false;
}
