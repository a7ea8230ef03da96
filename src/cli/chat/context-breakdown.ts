import { measureMessages, measureTools } from "../../agent/measure.js";
import type { Decision, Entry } from "../../context/ledger.js";
import { activeCheckpoint, currentDecisions, project, shownDecisions, summaryMessage } from "../../context/project.js";
import { estimateTokens } from "../../context/tokens.js";
import type { Message, SystemSegment, ToolDefinition } from "../../llm/types.js";
import { formatTokens } from "./status-line.js";

// What the next request will carry, part by part, in estimated tokens: the figures /context shows.

export interface ContextPart {
	label: string;
	tokens: number;
	/** A short count, e.g. "14 definitions", "6 results". */
	detail?: string;
}

export interface ContextBreakdownInput {
	system: readonly SystemSegment[];
	/** The rendered project instruction block inside the context tier ("" when none). */
	projectInstructions: string;
	tools: readonly ToolDefinition[];
	/** The transcript so far and the context engine's ledger. */
	entries: readonly Entry[];
	ledger: readonly Decision[];
	/** The round of the next request. */
	round: number;
}

/**
 * The parts of the next request (before the next prompt joins it): system tiers (the project instructions apart
 * from the rest of the context tier), tool definitions, the compaction summary in force, conversation history (and
 * how many of its messages show elided call arguments), tool results shown whole and tool results replaced by
 * placeholders. Tokens are estimates (o200k), the same ones the context reports use.
 */
export function contextBreakdown(input: ContextBreakdownInput): ContextPart[] {
	const tierTokens = (tier: SystemSegment["tier"]) =>
		input.system
			.filter((segment) => segment.tier === tier)
			.reduce((sum, segment) => sum + estimateTokens(segment.text), 0);
	const instructions = estimateTokens(input.projectInstructions);
	const decisions = currentDecisions(input.entries, input.ledger, input.round);
	const replaced = new Set<string>();
	input.entries.forEach((entry, index) => {
		if (decisions[index] && entry.message.role === "tool") replaced.add(entry.message.toolCallId);
	});
	const messages = project(input.entries, input.ledger, input.round);
	const checkpoint = activeCheckpoint(input.entries, input.ledger, input.round);
	const summary = checkpoint ? summaryMessage(checkpoint) : undefined;
	const history: Message[] = [];
	const live: Message[] = [];
	const placeholders: Message[] = [];
	for (const message of messages) {
		if (message === summary) continue;
		if (message.role !== "tool") history.push(message);
		else if (replaced.has(message.toolCallId)) placeholders.push(message);
		else live.push(message);
	}
	const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
	const elided = shownDecisions(input.entries, input.ledger, input.round).filter(
		(decision) => decision?.kind === "arguments",
	).length;
	return [
		{ label: "system: stable", tokens: tierTokens("stable") },
		{ label: "system: context", tokens: Math.max(0, tierTokens("context") - instructions) },
		{ label: "context files", tokens: instructions },
		{ label: "system: volatile", tokens: tierTokens("volatile") },
		{ label: "tools", tokens: measureTools(input.tools).tokens, detail: count(input.tools.length, "definition") },
		{ label: "compaction summary", tokens: summary ? measureMessages([summary]).tokens : 0 },
		{
			label: "history",
			tokens: measureMessages(history).tokens,
			detail: `${count(history.length, "message")}${elided > 0 ? ` (long call arguments elided in ${elided})` : ""}`,
		},
		{ label: "tool results: live", tokens: measureMessages(live).tokens, detail: count(live.length, "result") },
		{
			label: "tool results: placeholders",
			tokens: measureMessages(placeholders).tokens,
			detail: count(placeholders.length, "result"),
		},
	];
}

/** The /context text: one line per part with its share of the window, then the total. */
export function formatContextBreakdown(parts: readonly ContextPart[], contextWindow: number): string {
	const total = parts.reduce((sum, part) => sum + part.tokens, 0);
	const width = Math.max(...parts.map((part) => part.label.length), "total".length);
	const share = (tokens: number) => `${((100 * tokens) / Math.max(1, contextWindow)).toFixed(1)}%`;
	const line = (label: string, tokens: number, detail?: string) =>
		`${label.padEnd(width)}  ${tokens.toLocaleString("en-US").padStart(9)}  ${share(tokens).padStart(6)}${detail ? `  ${detail}` : ""}`;
	return [
		"the next request (before your next prompt), in estimated tokens:",
		...parts.map((part) => line(part.label, part.tokens, part.detail)),
		line("total", total, `of a ${formatTokens(contextWindow)} window`),
	].join("\n");
}
