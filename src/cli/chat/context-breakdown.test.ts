import { describe, expect, it } from "vitest";
import type { Entry, ReplaceDecision } from "../../context/ledger.js";
import { contextBreakdown, formatContextBreakdown } from "./context-breakdown.js";

const entries: Entry[] = [
	{ round: 1, message: { role: "user", content: [{ type: "text", text: "look at both files" }] } },
	{
		round: 1,
		message: {
			role: "assistant",
			text: "",
			toolCalls: [
				{ id: "a", name: "read_file", arguments: '{"path":"a.txt"}' },
				{ id: "b", name: "read_file", arguments: '{"path":"b.txt"}' },
			],
		},
	},
	{
		round: 1,
		message: { role: "tool", toolCallId: "a", toolName: "read_file", content: "x".repeat(4000), isError: false },
	},
	{ round: 1, message: { role: "tool", toolCallId: "b", toolName: "read_file", content: "short", isError: false } },
	{ round: 2, message: { role: "assistant", text: "done", toolCalls: [] } },
];
const elided: ReplaceDecision = {
	kind: "replace",
	round: 2,
	entry: 2,
	toolName: "read_file",
	reason: "elide",
	placeholder: "[earlier read_file result elided]",
	bytesBefore: 4000,
	bytesAfter: 33,
};

describe("contextBreakdown", () => {
	it("splits the request into system tiers, context files, tools, history, live results and placeholders", () => {
		const parts = contextBreakdown({
			system: [
				{ tier: "stable", text: "You are a careful agent." },
				{ tier: "context", text: "Working directory: /w\n\n# Project instructions\nUse tabs." },
				{ tier: "volatile", text: "Today's date: 2026-01-01" },
			],
			projectInstructions: "# Project instructions\nUse tabs.",
			tools: [{ name: "read_file", description: "read", parameters: { type: "object" } }],
			entries,
			ledger: [elided],
			round: 3,
		});
		const byLabel = Object.fromEntries(parts.map((part) => [part.label, part]));
		expect(Object.keys(byLabel)).toEqual([
			"system: stable",
			"system: context",
			"context files",
			"system: volatile",
			"tools",
			"compaction summary",
			"history",
			"tool results: live",
			"tool results: placeholders",
		]);
		expect(byLabel["context files"]?.tokens).toBeGreaterThan(0);
		expect(byLabel.history?.detail).toBe("3 messages");
		expect(byLabel["tool results: live"]?.detail).toBe("1 result");
		expect(byLabel["tool results: placeholders"]?.detail).toBe("1 result");
		expect(byLabel["compaction summary"]?.tokens).toBe(0);
		// the elided 4,000-character result costs far less than it would live
		expect(byLabel["tool results: placeholders"]?.tokens).toBeLessThan(100);

		const before = contextBreakdown({
			system: [],
			projectInstructions: "",
			tools: [],
			entries,
			ledger: [elided],
			round: 1,
		});
		expect(before.find((part) => part.label === "tool results: live")?.detail).toBe("2 results");

		const withArguments = contextBreakdown({
			system: [],
			projectInstructions: "",
			tools: [],
			entries,
			ledger: [
				elided,
				{ kind: "arguments", round: 2, entry: 1, arguments: ["{}", "{}"], bytesBefore: 32, bytesAfter: 4 },
			],
			round: 3,
		});
		expect(withArguments.find((part) => part.label === "history")?.detail).toBe(
			"3 messages (long call arguments elided in 1)",
		);

		const text = formatContextBreakdown(parts, 128_000);
		expect(text).toMatch(/^total\s+[\d,]+\s+[\d.]+%\s+of a 128k window$/m);
	});
});
