import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entryOf, settingsWith, text, toolRound, transcript } from "../../test/support/context-fixtures.js";
import type { Message } from "../llm/types.js";
import {
	type CheckpointDecision,
	compactionBudget,
	mechanicalDigest,
	planCompaction,
	SUMMARY_HEADINGS,
} from "./compaction.js";
import { runPolicy } from "./engine.js";
import type { Decision, Entry, ReplaceDecision } from "./ledger.js";
import type { PolicyState } from "./policies.js";
import { liveToolResultBytes, project, SUMMARY_LEAD, summaryMessage } from "./project.js";
import type { ContextPolicy } from "./settings.js";
import { estimateTokens } from "./tokens.js";
import { viewToolResults } from "./tool-results.js";

const user = (words: string, round = 1): Entry => ({
	round,
	message: { role: "user", content: [{ type: "text", text: words }] },
});
const answer = (words: string, round: number): Entry => ({
	round,
	message: { role: "assistant", text: words, toolCalls: [] },
});

function checkpoint(plan: { firstKept: number; pinned: number[] }, round: number, summary = "S"): CheckpointDecision {
	return {
		kind: "checkpoint",
		round,
		firstKept: plan.firstKept,
		pinned: plan.pinned,
		summary,
		tokensBefore: 0,
		tokensAfter: 0,
		source: "summary",
	};
}

function replace(entry: number, placeholder: string, round: number): ReplaceDecision {
	return {
		kind: "replace",
		round,
		entry,
		toolName: "read_file",
		reason: "elide",
		placeholder,
		bytesBefore: 0,
		bytesAfter: Buffer.byteLength(placeholder),
	};
}

const tokens = (message: Message) => estimateTokens(JSON.stringify(message));
const contentOf = (message: Message | undefined) =>
	message?.role === "tool"
		? message.content
		: message?.role === "user"
			? (message.content[0] as { text: string }).text
			: "";

describe("compactionBudget", () => {
	it("keeps 10% of the window as tail, between 2K and 64K tokens and at most a quarter of the window", () => {
		const tails = [0, 4_000, 8_000, 20_000, 128_000, 200_000, 1_000_000, 2_000_000].map(
			(window) => compactionBudget(window).tailTokens,
		);
		expect(tails).toEqual([8_000, 1_000, 2_000, 2_000, 12_800, 20_000, 64_000, 64_000]);
	});

	it("pins a first message up to 15% of the window, at most 16K tokens", () => {
		expect([0, 20_000, 200_000].map((window) => compactionBudget(window).pinTokens)).toEqual([8_000, 3_000, 16_000]);
	});
});

describe("planCompaction", () => {
	// ten rounds of one result each, ~500 tokens per result
	const entries = transcript(Array.from({ length: 10 }, (_, index) => [text(2000, String(index))]));
	const resultTokens = tokens(entries[2]?.message as Message);

	it("keeps as verbatim tail the newest exchanges that fit the budget, starting at an assistant message", () => {
		const budget = { tailTokens: Math.floor(resultTokens * 3.5), pinTokens: 1000 };
		const plan = planCompaction(entries, [], 11, budget);
		expect(plan).toBeDefined();
		const { firstKept, pinned } = plan as NonNullable<typeof plan>;
		expect(entries[firstKept]?.message.role).toBe("assistant");
		const tail = entries.slice(firstKept).reduce((sum, entry) => sum + tokens(entry.message), 0);
		expect(tail).toBeLessThanOrEqual(budget.tailTokens);
		// one exchange more would not fit
		const more = entries.slice(firstKept - 2).reduce((sum, entry) => sum + tokens(entry.message), 0);
		expect(more).toBeGreaterThan(budget.tailTokens);
		expect(entries.length - firstKept).toBe(6); // three exchanges: assistant + result each
		expect(pinned).toEqual([0]);
	});

	it("never keeps less than the newest complete exchange, even when it alone is over the budget", () => {
		const plan = planCompaction(entries, [], 11, { tailTokens: 10, pinTokens: 1000 });
		expect(plan?.firstKept).toBe(entries.length - 2);
	});

	it("folds only what the last answered request held: the cut is never after the newest assistant message", () => {
		const withPrompt = [...entries, answer("all read", 11), user("and now the tests", 12)];
		const plan = planCompaction(withPrompt, [], 12, { tailTokens: 10, pinTokens: 1000 });
		expect(plan?.firstKept).toBe(withPrompt.length - 2);
	});

	it("never splits a tool-call pair: a result recorded after a typed prompt stays with its call", () => {
		// the person typed while the tool ran: assistant, user, result
		const split: Entry[] = [
			user("go"),
			...toolRound(1, [text(400)]),
			...toolRound(2, [text(400)]).flatMap((entry, index) => (index === 1 ? [user("also this", 2), entry] : [entry])),
			...toolRound(3, [text(400)]),
		];
		const typed = split.findIndex((entry, index) => index > 0 && entry.message.role === "user");
		for (const tailTokens of [1, 150, 250, 400, 10_000]) {
			const plan = planCompaction(split, [], 4, { tailTokens, pinTokens: 1000 });
			expect(plan?.firstKept).not.toBe(typed);
		}
	});

	it("pins the first user message only when it fits the pin budget", () => {
		const big = [user(text(8000)), ...entries.slice(1)];
		expect(planCompaction(big, [], 11, { tailTokens: 10, pinTokens: 100 })?.pinned).toEqual([]);
		expect(planCompaction(big, [], 11, { tailTokens: 10, pinTokens: 10_000 })?.pinned).toEqual([0]);
	});

	it("returns nothing when there is nothing to fold", () => {
		expect(planCompaction([user("hi")], [], 1, { tailTokens: 10, pinTokens: 100 })).toBeUndefined();
		const one = transcript([[text(100)]]);
		expect(planCompaction(one, [], 2, { tailTokens: 10, pinTokens: 100 })).toBeUndefined();
	});

	it("after a checkpoint only ever folds further: the next cut is past the previous one", () => {
		const first = planCompaction(entries, [], 11, { tailTokens: resultTokens * 4, pinTokens: 1000 });
		const ledger: Decision[] = [checkpoint(first as NonNullable<typeof first>, 11)];
		const later = [...entries, ...toolRound(11, [text(2000, "z")])];
		const second = planCompaction(later, ledger, 12, { tailTokens: resultTokens * 4, pinTokens: 1000 });
		expect(second?.foldFrom).toBe(first?.firstKept);
		expect(second?.firstKept).toBeGreaterThan(first?.firstKept as number);
		expect(second?.pinned).toEqual([0]);
		expect(second?.previous).toBe(ledger[0]);
		// nothing past the previous cut but the newest exchange: nothing to fold
		const last: Decision[] = [checkpoint({ firstKept: entries.length - 2, pinned: [0] }, 11)];
		expect(planCompaction(entries, last, 11, { tailTokens: 1e9, pinTokens: 1000 })).toBeUndefined();
	});
});

describe("the projection of a checkpoint", () => {
	const entries = transcript([[text(600, "a")], [text(600, "b")], [text(600, "c")], [text(600, "d")]]);
	const cut = entryOf(entries, "c3-0") - 1; // the assistant message of round 3

	it("shows the pinned first message, ONE summary message, then the entries from firstKept on", () => {
		const decision = checkpoint({ firstKept: cut, pinned: [0] }, 5, "## Task\nread files");
		const projected = project(entries, [decision], 5);
		expect(projected).toEqual([
			entries[0]?.message,
			{
				role: "user",
				content: [
					{ type: "text", text: `<compaction-summary>\n${SUMMARY_LEAD}\n\n## Task\nread files\n</compaction-summary>` },
				],
			},
			...entries.slice(cut).map((entry) => entry.message),
		]);
		expect(projected[1]).toBe(summaryMessage(decision));
	});

	it("applies from its round on, and replace decisions still apply to the kept entries", () => {
		const decision = checkpoint({ firstKept: cut, pinned: [0] }, 5);
		const kept = entryOf(entries, "c3-0");
		const ledger: Decision[] = [decision, replace(kept, "[gone]", 5)];
		expect(project(entries, ledger, 4)).toHaveLength(entries.length);
		const projected = project(entries, ledger, 5);
		expect(projected).toHaveLength(2 + entries.length - cut);
		expect(contentOf(projected[3])).toBe("[gone]");
	});

	it("the latest checkpoint wins, and live tool-result bytes count only what is shown", () => {
		const later = entryOf(entries, "c4-0") - 1;
		const ledger: Decision[] = [
			checkpoint({ firstKept: cut, pinned: [0] }, 5, "one"),
			checkpoint({ firstKept: later, pinned: [0] }, 6, "two"),
		];
		const projected = project(entries, ledger, 6);
		expect(contentOf(projected[1])).toContain("two");
		expect(projected).toHaveLength(2 + entries.length - later);
		expect(liveToolResultBytes(entries, ledger, 6)).toBe(600);
		expect(liveToolResultBytes(entries, ledger, 5)).toBe(1200);
		expect(liveToolResultBytes(entries, [], 6)).toBe(2400);
	});

	it("the incremental cache gives what a fresh build gives, as entries and decisions arrive", () => {
		const growing: Entry[] = [];
		const ledger: Decision[] = [];
		for (const [index, entry] of entries.entries()) {
			growing.push(entry);
			if (index === cut + 1) ledger.push(checkpoint({ firstKept: cut, pinned: [0] }, 4));
			if (index === cut + 3) ledger.push(replace(cut + 1, "[x]", 4));
			const round = entry.round + 1;
			expect(project(growing, ledger, round)).toEqual(project([...growing], [...ledger], round));
			expect(liveToolResultBytes(growing, ledger, round)).toBe(liveToolResultBytes([...growing], [...ledger], round));
		}
	});

	it("tool-result views (what every policy sees) start at firstKept", () => {
		const ledger: Decision[] = [checkpoint({ firstKept: cut, pinned: [0] }, 5)];
		expect(viewToolResults(entries, ledger, 5).map((view) => view.message.toolCallId)).toEqual(["c3-0", "c4-0"]);
	});
});

describe("E9: policies after a checkpoint", () => {
	const POLICIES: ContextPolicy[] = ["rounds", "budget", "ratio", "mask", "clear", "auto"];
	const spec = fc.record({
		rounds: fc.array(
			fc.record({
				sizes: fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 3 }),
				prompt: fc.boolean(),
			}),
			{ minLength: 2, maxLength: 9 },
		),
		compactAt: fc.integer({ min: 1, max: 8 }),
		tailTokens: fc.integer({ min: 1, max: 3000 }),
		policies: fc.array(fc.constantFrom(...POLICIES), { minLength: 9, maxLength: 9 }),
		budget: fc.integer({ min: 0, max: 4000 }),
	});

	it("never grow the request, never bring folded text back, never decide about folded results", () => {
		fc.assert(
			fc.property(spec, (drawn) => {
				const entries: Entry[] = [user("first prompt")];
				const ledger: Decision[] = [];
				const folded = new Set<string>();
				for (const [index, item] of drawn.rounds.entries()) {
					const round = index + 1;
					if (item.prompt && index > 0) entries.push(user(`prompt ${round}`, round));
					entries.push(
						...toolRound(
							round,
							item.sizes.map((size, number) => `#${round}-${number}#${text(size, "y")}`),
						),
					);
					const next = round + 1;
					if (round === drawn.compactAt) {
						const plan = planCompaction(entries, ledger, next, { tailTokens: drawn.tailTokens, pinTokens: 100 });
						if (plan) {
							ledger.push(checkpoint(plan, next));
							for (const entry of entries.slice(0, plan.firstKept))
								if (entry.message.role === "tool") folded.add(entry.message.content.slice(0, 8));
						}
					}
					const state: PolicyState = {
						entries,
						ledger,
						round: next,
						settings: settingsWith({
							policy: drawn.policies[index] ?? "rounds",
							keepToolRounds: 1,
							historyBudgetBytes: drawn.budget,
							keepRecentResults: 0,
							contextWindow: 4000,
							maskKeep: 0,
							clearTriggerTokens: 0,
							clearKeep: 0,
							clearMinTokens: 0,
							spillDir: "off",
						}),
						promptTokens: 3900,
						tools: {},
					};
					const before = project(entries, ledger, next);
					const { decisions } = runPolicy(state);
					const checkpointAt = ledger.find((decision) => decision.kind === "checkpoint");
					for (const decision of decisions)
						expect(decision.entry).toBeGreaterThanOrEqual(
							checkpointAt?.kind === "checkpoint" ? checkpointAt.firstKept : 0,
						);
					ledger.push(...decisions);
					const after = project(entries, ledger, next);
					expect(JSON.stringify(after).length).toBeLessThanOrEqual(JSON.stringify(before).length);
					const shown = JSON.stringify(after);
					for (const marker of folded) expect(shown).not.toContain(marker);
					// idempotent: nothing left to do on the same state
					expect(runPolicy({ ...state, ledger: [...ledger] }).decisions).toEqual([]);
				}
			}),
			{ numRuns: 150 },
		);
	});
});

describe("mechanicalDigest", () => {
	const entries: Entry[] = [
		user("Fix the failing parser test"),
		{
			round: 1,
			message: {
				role: "assistant",
				text: "",
				toolCalls: [
					{ id: "a", name: "read_file", arguments: JSON.stringify({ path: "src/parser.ts" }) },
					{ id: "b", name: "shell", arguments: JSON.stringify({ command: "npm test" }) },
				],
			},
		},
		{
			round: 1,
			message: { role: "tool", toolCallId: "a", toolName: "read_file", content: "export …", isError: false },
		},
		{ round: 1, message: { role: "tool", toolCallId: "b", toolName: "shell", content: "1 failing", isError: true } },
		{
			round: 2,
			message: {
				role: "assistant",
				text: "Found it",
				toolCalls: [
					{ id: "c", name: "edit_file", arguments: JSON.stringify({ path: "src/parser.ts", old: "a", new: "b" }) },
				],
			},
		},
		{ round: 2, message: { role: "tool", toolCallId: "c", toolName: "edit_file", content: "edited", isError: false } },
	];

	it("lists the task, the calls, the files touched and the last messages under the fixed headings, in order", () => {
		const digest = mechanicalDigest(entries, entries.length);
		const headings = [...digest.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
		expect(headings).toEqual([...SUMMARY_HEADINGS]);
		expect(digest).toContain("Fix the failing parser test");
		expect(digest).toContain('- shell {"command":"npm test"}');
		expect(digest).toContain("- src/parser.ts (read, edited)");
		expect(digest).toContain("- shell (error): 1 failing");
	});

	it("covers only [from, upTo), carries the previous summary, and stays bounded for a huge transcript", () => {
		expect(mechanicalDigest(entries, 2)).not.toContain("edit_file");
		const carried = mechanicalDigest(entries, entries.length, { from: 4, previous: "## Task\nold summary" });
		expect(carried).toContain("old summary");
		expect(carried).not.toContain("npm test");
		const huge = transcript(Array.from({ length: 300 }, (_, index) => [text(5000, String(index % 10))]));
		expect(mechanicalDigest(huge, huge.length).length).toBeLessThan(12_000);
	});
});
