import { utf8Bytes } from "../llm/text.js";
import type { AssistantMessage } from "../llm/types.js";
import type { ReplaceDecision } from "./ledger.js";

// The text a replaced tool result is shown as, one builder per reason (and the message an assistant turn with elided
// arguments is shown as). Every text depends only on its arguments:
// nothing time-dependent, so the same decision always renders the same bytes. A spilled placeholder names the file
// holding the original and says how to get it back; a bare one says how big the output was and to re-run the tool.

/** "rounds": `[earlier <tool> output pruned — <N> chars; re-run the tool if you need it again]`. */
export function prunePlaceholder(toolName: string, characters: number, path?: string): string {
	return path
		? `[earlier ${nameOf(toolName)} output pruned — ${characters} chars saved to ${path}; read_file to recover]`
		: `[earlier ${nameOf(toolName)} output pruned — ${characters} chars; re-run the tool if you need it again]`;
}

/** "budget": `[earlier <tool> result elided to reclaim context — <N> bytes. Re-run the tool if …]`. */
export function elidePlaceholder(toolName: string, bytes: number, path?: string): string {
	return path
		? `[earlier ${nameOf(toolName)} result elided — ${bytes} bytes saved to ${path}; read_file to recover.]`
		: `[earlier ${nameOf(toolName)} result elided to reclaim context — ${bytes} bytes. Re-run the tool if you still need this output.]`;
}

/** "mask": `[earlier <tool> output omitted]`. */
export function maskPlaceholder(toolName: string, path?: string): string {
	return path
		? `[earlier ${nameOf(toolName)} output omitted — saved to ${path}; read_file to recover]`
		: `[earlier ${nameOf(toolName)} output omitted]`;
}

/** "clear": `[tool result cleared]`. */
export function clearPlaceholder(path?: string): string {
	return path ? `[tool result cleared — saved to ${path}; read_file to recover]` : "[tool result cleared]";
}

/** The tool name as placeholders show it ("tool" when the name is empty). */
export function nameOf(toolName: string): string {
	return toolName || "tool";
}

/**
 * `decision` rebuilt without its spill, for when the agent could not write the spill file: the placeholder loses
 * the path and gets the re-run hint back. Returns the decision unchanged when it has no spill, and undefined when the
 * bare placeholder would not be smaller than the original result (then the decision must be dropped) or when the
 * placeholder is not one the engine wrote. Pure.
 */
export function barePlaceholder(decision: ReplaceDecision): ReplaceDecision | undefined {
	if (!decision.spill) return decision;
	const bare = bareText(decision, decision.spill.path);
	if (bare === undefined) return undefined;
	const bytesAfter = utf8Bytes(bare);
	if (bytesAfter >= decision.bytesBefore) return undefined;
	const { spill: _spill, ...rest } = decision;
	return { ...rest, placeholder: bare, bytesAfter };
}

function bareText(decision: ReplaceDecision, path: string): string | undefined {
	const { toolName, placeholder } = decision;
	switch (decision.reason) {
		case "elide":
			return elidePlaceholder(toolName, decision.bytesBefore);
		case "mask":
			return maskPlaceholder(toolName);
		case "clear":
			return clearPlaceholder();
		case "prune": {
			const prefix = `[earlier ${nameOf(toolName)} output pruned — `;
			const characters = between(placeholder, prefix, ` chars saved to ${path}; read_file to recover]`);
			return characters && /^\d+$/.test(characters) ? prunePlaceholder(toolName, Number(characters)) : undefined;
		}
		case "snip": {
			const spilled = `[snipped tool result — ${nameOf(toolName)} (${decision.bytesBefore} bytes) archive=${path} head=`;
			if (!placeholder.startsWith(spilled)) return undefined;
			const bare = `[snipped tool result — ${nameOf(toolName)} (${decision.bytesBefore} bytes) archive=none head=`;
			return bare + placeholder.slice(spilled.length);
		}
	}
}

/** The text between `prefix` and `suffix` when `text` is exactly prefix + middle + suffix. */
function between(text: string, prefix: string, suffix: string): string | undefined {
	if (!text.startsWith(prefix) || !text.endsWith(suffix) || text.length < prefix.length + suffix.length)
		return undefined;
	return text.slice(prefix.length, text.length - suffix.length);
}

/**
 * `message` with `shown` as its calls' arguments (one text per call, in order; ids and names stay): how an assistant
 * message with elided arguments is sent. Frozen, like every replaced message.
 */
export function withShownArguments(message: AssistantMessage, shown: readonly string[]): AssistantMessage {
	const toolCalls = message.toolCalls.map((call, index) =>
		Object.freeze({ ...call, arguments: shown[index] as string }),
	);
	return Object.freeze({ ...message, toolCalls: Object.freeze(toolCalls) as AssistantMessage["toolCalls"] });
}
