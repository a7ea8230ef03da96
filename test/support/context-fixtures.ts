// Hand-built transcripts and policy states for the context-engine tests.
import type { Decision, Entry, PassDecision, ReplaceDecision } from "../../src/context/ledger.js";
import type { PolicyState } from "../../src/context/policies.js";
import { type ContextSettings, DEFAULT_CONTEXT_SETTINGS } from "../../src/context/settings.js";
import type { Message } from "../../src/llm/types.js";

/** One tool result of a hand-built round: its text, or the text with a tool name, an error flag, the call's arguments. */
export type ResultSpec = string | { content: string; tool?: string; isError?: boolean; arguments?: string };

/**
 * A transcript: a user prompt in round 1, then per round one assistant message calling one tool per result and the
 * results, in call order. Call ids are `c<round>-<n>`; the default tool is "read_file".
 */
export function transcript(rounds: ResultSpec[][]): Entry[] {
	const entries: Entry[] = [{ round: 1, message: { role: "user", content: [{ type: "text", text: "go" }] } }];
	for (const [index, results] of rounds.entries()) entries.push(...toolRound(index + 1, results));
	return entries;
}

/** The entries of one round: the assistant message and its results. */
export function toolRound(round: number, results: ResultSpec[]): Entry[] {
	const specs = results.map((spec) => (typeof spec === "string" ? { content: spec } : spec));
	const calls = specs.map((spec, index) => ({
		id: `c${round}-${index}`,
		name: spec.tool ?? "read_file",
		arguments: spec.arguments ?? "{}",
	}));
	const messages: Message[] = [
		{ role: "assistant", text: "", toolCalls: calls },
		...specs.map(
			(spec, index): Message => ({
				role: "tool",
				toolCallId: `c${round}-${index}`,
				toolName: spec.tool ?? "read_file",
				content: spec.content,
				isError: spec.isError ?? false,
			}),
		),
	];
	return messages.map((message) => ({ message, round }));
}

/** Index of the tool result answering call `id` in `entries`. */
export function entryOf(entries: readonly Entry[], id: string): number {
	return entries.findIndex((entry) => entry.message.role === "tool" && entry.message.toolCallId === id);
}

/** Default settings with `overrides`. */
export function settingsWith(overrides: Partial<ContextSettings>): ContextSettings {
	return { ...DEFAULT_CONTEXT_SETTINGS, ...overrides };
}

/** A policy state for the request after the newest round of `entries`. */
export function stateOf(
	entries: Entry[],
	overrides: Partial<ContextSettings>,
	extra: { ledger?: Decision[]; promptTokens?: number; round?: number; tools?: PolicyState["tools"] } = {},
): PolicyState {
	const newest = entries.reduce((round, entry) => Math.max(round, entry.round), 0);
	return {
		entries,
		ledger: extra.ledger ?? [],
		round: extra.round ?? newest + 1,
		settings: settingsWith(overrides),
		promptTokens: extra.promptTokens ?? 0,
		tools: extra.tools ?? {},
	};
}

/** `count` bytes of ASCII text in lines of at most 50 bytes. */
export function text(count: number, seed = "x"): string {
	const line = `${seed.repeat(49)}\n`;
	return line.repeat(Math.ceil(count / line.length)).slice(0, count);
}

/** The decisions of a pass that all replace results (throws on an arguments decision): for tests of result policies. */
export function results(decisions: readonly PassDecision[]): ReplaceDecision[] {
	return decisions.map((decision) => {
		if (decision.kind !== "replace") throw new Error(`expected only replaced results, got ${decision.kind}`);
		return decision;
	});
}
