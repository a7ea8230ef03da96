import { utf8Bytes } from "../llm/text.js";
import type { Message } from "../llm/types.js";
import type { Decision, Entry, ReplaceDecision } from "./ledger.js";
import { activeCheckpoint, currentDecisions } from "./project.js";

/** The tool whose results carry skill bodies. */
export const SKILL_VIEW = "skill_view";

/** The one line that stands for a pruned skill_view body. Pure. */
export function skillPrunedMarker(name: string): string {
	return `[skill ${name} body pruned — call skill_view("${name}") to reload it]`;
}

/**
 * Which skill_view results to replace by their one-line marker: every successful skill_view result except the
 * `protectRecentViews` most recent (in transcript order), keyed by tool call id. The skill's name comes from the
 * call's arguments, else from the result's first line. Pure.
 */
export function skillViewMarkers(messages: readonly Message[], protectRecentViews: number): Map<string, string> {
	const requested = new Map<string, string>();
	const views: { id: string; name: string }[] = [];
	for (const message of messages) {
		if (message.role === "assistant") {
			for (const call of message.toolCalls) {
				if (call.name !== SKILL_VIEW) continue;
				const name = nameArgument(call.arguments);
				if (name !== undefined) requested.set(call.id, name);
			}
		} else if (message.role === "tool" && message.toolName === SKILL_VIEW && !message.isError) {
			const name = requested.get(message.toolCallId) ?? /^Skill "([^"\n]+)"/.exec(message.content)?.[1] ?? "unknown";
			views.push({ id: message.toolCallId, name });
		}
	}
	const keep = Number.isNaN(protectRecentViews) ? 0 : Math.max(0, Math.floor(protectRecentViews));
	const older = views.slice(0, Math.max(0, views.length - keep));
	return new Map(older.map((view) => [view.id, skillPrunedMarker(view.name)]));
}

function nameArgument(raw: string): string | undefined {
	try {
		const value: unknown = JSON.parse(raw);
		if (value && typeof value === "object" && "name" in value && typeof value.name === "string")
			return value.name.trim();
	} catch {
		// Malformed arguments: the caller falls back to the result's first line.
	}
	return undefined;
}

/**
 * Decisions turning skill_view bodies older than the `protectRecentViews` most recent views into their marker (skill
 * bodies are exempt from every stale-output policy; this is their own lifecycle). Each body is replaced once; the
 * in-flight round is never touched. Pure.
 */
export function skillDecisions(
	entries: readonly Entry[],
	ledger: readonly Decision[],
	round: number,
	protectRecentViews: number,
): ReplaceDecision[] {
	const markers = skillViewMarkers(
		entries.map((entry) => entry.message),
		protectRecentViews,
	);
	if (markers.size === 0) return [];
	const current = currentDecisions(entries, ledger, round);
	// results a compaction checkpoint folded away are never shown again: nothing to decide about them
	const shownFrom = activeCheckpoint(entries, ledger, round)?.firstKept ?? 0;
	let newestRound = 0;
	for (const entry of entries) if (entry.message.role === "tool") newestRound = Math.max(newestRound, entry.round);
	const decisions: ReplaceDecision[] = [];
	for (const [index, entry] of entries.entries()) {
		const message = entry.message;
		if (message.role !== "tool" || index < shownFrom || current[index] || entry.round === newestRound) continue;
		const marker = markers.get(message.toolCallId);
		if (marker === undefined) continue;
		const bytesBefore = utf8Bytes(message.content);
		const bytesAfter = utf8Bytes(marker);
		// compare as sent: the marker's quotes are escaped in the request's JSON, the body's characters may not be
		if (bytesAfter >= bytesBefore || utf8Bytes(JSON.stringify(marker)) >= utf8Bytes(JSON.stringify(message.content)))
			continue;
		decisions.push({
			kind: "replace",
			round,
			entry: index,
			toolName: message.toolName,
			reason: "skill",
			placeholder: marker,
			bytesBefore,
			bytesAfter,
		});
	}
	return decisions;
}
