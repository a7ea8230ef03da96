import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entryOf, text, toolRound, transcript } from "../../test/support/context-fixtures.js";
import type { Message } from "../llm/types.js";
import type { Decision, Entry, ReplaceDecision } from "./ledger.js";
import { currentDecisions, liveToolResultBytes, project } from "./project.js";
import { repairTranscript } from "./transcript.js";

const bytes = (value: string) => Buffer.byteLength(value, "utf8");

function decision(entry: number, placeholder: string, round = 1): ReplaceDecision {
	return {
		kind: "replace",
		round,
		entry,
		toolName: "read_file",
		reason: "elide",
		placeholder,
		bytesBefore: 0,
		bytesAfter: bytes(placeholder),
	};
}

/** The projection computed the slow, obvious way: decisions in ledger order, each applied when smaller. */
function reference(entries: readonly Entry[], ledger: readonly Decision[], round: number): Message[] {
	const shown = entries.map((entry) => entry.message);
	for (const item of ledger) {
		if (item.kind !== "replace") continue;
		const message = shown[item.entry];
		if (item.round > round || message?.role !== "tool") continue;
		if (bytes(item.placeholder) < bytes(message.content)) shown[item.entry] = { ...message, content: item.placeholder };
	}
	return repairTranscript(shown);
}

describe("project", () => {
	const entries = transcript([[text(500), { content: text(400), isError: true }], [text(300)]]);
	const first = entryOf(entries, "c1-0");
	const failed = entryOf(entries, "c1-1");

	it("E8: an empty ledger sends the transcript as it is (repaired)", () => {
		expect(project(entries, [], 3)).toEqual(repairTranscript(entries.map((entry) => entry.message)));
	});

	it("E8: only the text changes: message count, call ids, tool names and the error flag stay", () => {
		const projected = project(entries, [decision(first, "[a]"), decision(failed, "[b]")], 3);
		expect(projected).toHaveLength(entries.length);
		expect(projected[first]).toEqual({
			role: "tool",
			toolCallId: "c1-0",
			toolName: "read_file",
			content: "[a]",
			isError: false,
		});
		expect(projected[failed]).toEqual({
			role: "tool",
			toolCallId: "c1-1",
			toolName: "read_file",
			content: "[b]",
			isError: true,
		});
		expect(projected.filter((_, index) => index !== first && index !== failed)).toEqual(
			entries.filter((_, index) => index !== first && index !== failed).map((entry) => entry.message),
		);
	});

	it("E8: ignores decisions for unknown entries and for messages that are not tool results", () => {
		const ledger = [decision(999, "[x]"), decision(-1, "[x]"), decision(0, "[x]"), decision(1, "[x]")];
		expect(project(entries, ledger, 3)).toEqual(project(entries, [], 3));
	});

	it("applies a decision only from its round on", () => {
		const ledger = [decision(first, "[later]", 3)];
		expect(project(entries, ledger, 2)[first]).toBe(entries[first]?.message);
		expect((project(entries, ledger, 3)[first] as { content: string }).content).toBe("[later]");
	});

	it("a later decision supersedes an earlier one only when its placeholder is smaller", () => {
		const content = (ledger: Decision[]) => (project(entries, ledger, 3)[first] as { content: string }).content;
		expect(content([decision(first, "[snipped, long]"), decision(first, "[short]")])).toBe("[short]");
		expect(content([decision(first, "[short]"), decision(first, "[snipped, long]")])).toBe("[short]");
		expect(content([decision(first, "[one]"), decision(first, "[two]")])).toBe("[one]");
	});

	it("reads the ledger in order also when an earlier decision only applies from a later round", () => {
		const ledger = [decision(first, "[a]", 4), decision(first, "[b]", 3)];
		const content = (round: number) => (project(entries, ledger, round)[first] as { content: string }).content;
		expect(content(3)).toBe("[b]");
		expect(content(4)).toBe("[a]");
	});

	it("never applies a placeholder that is not smaller than the original", () => {
		const small = transcript([["tiny"], [text(10)]]);
		expect(project(small, [decision(entryOf(small, "c1-0"), "[bigger than tiny]")], 3)).toEqual(project(small, [], 3));
	});

	it("never mutates its input", () => {
		const copy = structuredClone(entries);
		const ledger = [decision(first, "[a]")];
		project(entries, ledger, 3);
		expect(entries).toEqual(copy);
		expect(ledger).toEqual([decision(first, "[a]")]);
	});

	it("returns the same replaced message object for the same entry and decision", () => {
		const ledger = [decision(first, "[a]")];
		const once = project(entries, ledger, 3)[first];
		expect(project([...entries], [...ledger], 4)[first]).toBe(once);
		expect(Object.isFrozen(once)).toBe(true);
	});
});

describe("liveToolResultBytes and currentDecisions", () => {
	it("count tool-result text as shown", () => {
		const entries = transcript([[text(500), text(400)], [text(300)]]);
		const ledger = [decision(entryOf(entries, "c1-0"), "[a]")];
		expect(liveToolResultBytes(entries, [], 3)).toBe(1200);
		expect(liveToolResultBytes(entries, ledger, 3)).toBe(703);
		expect(currentDecisions(entries, ledger, 3)[entryOf(entries, "c1-0")]).toBe(ledger[0]);
		expect(currentDecisions(entries, ledger, 3).filter(Boolean)).toHaveLength(1);
	});
});

describe("the incremental projection", () => {
	// One step of a session: new rounds join the transcript, decisions join the ledger, a round is projected.
	const step = fc.record({
		rounds: fc.array(fc.array(fc.string({ maxLength: 60 }), { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
		decisions: fc.array(
			fc.record({
				entry: fc.integer({ min: -1, max: 16 }),
				text: fc.oneof(fc.constantFrom("[a]", "[b]", "[a longer one]"), fc.string({ maxLength: 30 })),
				roundShift: fc.integer({ min: -2, max: 2 }),
			}),
			{ maxLength: 4 },
		),
		roundShift: fc.integer({ min: -1, max: 2 }),
		copy: fc.boolean(),
	});

	it("gives exactly what a fresh, uncached build gives, whatever the order of growth", () => {
		fc.assert(
			fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
				const entries: Entry[] = [];
				const ledger: Decision[] = [];
				let round = 1;
				for (const next of steps) {
					for (const results of next.rounds) entries.push(...toolRound(round++, results));
					for (const item of next.decisions) ledger.push(decision(item.entry, item.text, round + item.roundShift));
					const target = Math.max(1, round + next.roundShift);
					const projected = next.copy ? project([...entries], [...ledger], target) : project(entries, ledger, target);
					expect(projected).toEqual(reference(entries, ledger, target));
				}
			}),
			{ numRuns: 300 },
		);
	});
});
