import { describe, expect, it } from "vitest";
import { entryOf, results, stateOf, text, transcript } from "../../test/support/context-fixtures.js";
import type { PassDecision, ReplaceDecision } from "./ledger.js";
import {
	barePlaceholder,
	budgetPolicy,
	clearPolicy,
	maskPolicy,
	offPolicy,
	type Policy,
	ratioPolicy,
	roundsPolicy,
} from "./policies.js";
import type { ContextSettings } from "./settings.js";
import { READ_ONLY_SNIP, snipToolResult } from "./snip.js";

const SPILL = { spillDir: "/spill/s1", spillAvailable: true } as const;
const replaced = (decisions: readonly PassDecision[]) => decisions.map((decision) => decision.entry);

describe("offPolicy", () => {
	it("never decides anything", () => {
		const entries = transcript([[text(50_000)], [text(50_000)], [text(50_000)]]);
		expect(offPolicy(stateOf(entries, { historyBudgetBytes: 10, keepToolRounds: 0 }, { promptTokens: 1e9 }))).toEqual(
			[],
		);
	});
});

describe("roundsPolicy", () => {
	it("prunes the results of tool rounds older than the newest keepToolRounds, with the exact stub", () => {
		const rounds = Array.from({ length: 8 }, (_, index) => [text(300 + index)]);
		rounds[0] = [text(300), "naïve 😀 ".repeat(20)];
		const entries = transcript(rounds);
		const decisions = results(roundsPolicy(stateOf(entries, { policy: "rounds", keepToolRounds: 6 })));
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c1-1"), entryOf(entries, "c2-0")]);
		expect(decisions.map((decision) => decision.placeholder)).toEqual([
			"[earlier read_file output pruned — 300 chars; re-run the tool if you need it again]",
			"[earlier read_file output pruned — 160 chars; re-run the tool if you need it again]",
			"[earlier read_file output pruned — 301 chars; re-run the tool if you need it again]",
		]);
		expect(decisions[0]).toMatchObject({
			kind: "replace",
			round: 9,
			reason: "prune",
			bytesBefore: 300,
			toolName: "read_file",
		});
	});

	it("with a spill, names the file instead of asking for a re-run", () => {
		const entries = transcript([[{ content: text(2000), tool: "shell" }], [text(10)]]);
		const [decision] = results(roundsPolicy(stateOf(entries, { keepToolRounds: 1, ...SPILL })));
		expect(decision?.placeholder).toBe(
			"[earlier shell output pruned — 2000 chars saved to /spill/s1/0000.txt; read_file to recover]",
		);
		expect(decision?.spill).toEqual({ position: 0, path: "/spill/s1/0000.txt" });
	});

	it("keepToolRounds 0 prunes every round but the in-flight one", () => {
		const entries = transcript([[text(300)], [text(300)], [text(300), text(300)]]);
		const decisions = roundsPolicy(stateOf(entries, { keepToolRounds: 0 }));
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c2-0")]);
	});

	it("keeps everything while there are no more tool rounds than keepToolRounds", () => {
		const entries = transcript([[text(300)], [text(300)]]);
		expect(roundsPolicy(stateOf(entries, { keepToolRounds: 2 }))).toEqual([]);
	});
});

describe("budgetPolicy", () => {
	it("elides oldest first with the exact stub, bare or spilled", () => {
		const entries = transcript([[text(600)], [text(600)], [text(400)]]);
		const settings: Partial<ContextSettings> = {
			historyBudgetBytes: 1000,
			historyBudgetLowBytes: 500,
			keepRecentResults: 1,
		};
		const [bare] = budgetPolicy(stateOf(entries, settings));
		expect(bare?.placeholder).toBe(
			"[earlier read_file result elided to reclaim context — 600 bytes. Re-run the tool if you still need this output.]",
		);
		const [spilled] = budgetPolicy(stateOf(entries, { ...settings, ...SPILL }));
		expect(spilled?.placeholder).toBe(
			"[earlier read_file result elided — 600 bytes saved to /spill/s1/0000.txt; read_file to recover.]",
		);
		expect(spilled).toMatchObject({
			reason: "elide",
			bytesBefore: 600,
			bytesAfter: Buffer.byteLength(spilled?.placeholder ?? ""),
		});
	});

	it("does nothing without a budget", () => {
		const entries = transcript([[text(60_000)], [text(60_000)], [text(60_000)]]);
		expect(budgetPolicy(stateOf(entries, { historyBudgetBytes: 0, keepRecentResults: 0 }))).toEqual([]);
	});
});

describe("ratioPolicy", () => {
	const settings: Partial<ContextSettings> = { contextWindow: 1000, toolResultSnipRatio: 0.6, keepRecentResults: 1 };
	const entries = transcript([[text(3000)], [text(3000)], [text(3000)], [text(3000)]]);

	it("snips nothing below the threshold and every stale result from it on", () => {
		expect(ratioPolicy(stateOf(entries, settings, { promptTokens: 599 }))).toEqual([]);
		const decisions = ratioPolicy(stateOf(entries, settings, { promptTokens: 600 }));
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c2-0"), entryOf(entries, "c3-0")]);
		const content = text(3000);
		expect(decisions[0]?.placeholder).toBe(
			snipToolResult(content, { toolName: "read_file", geometry: READ_ONLY_SNIP }),
		);
	});

	it("uses the tool's own geometry and names the archive", () => {
		const tools = { read_file: { readOnly: true, snip: { headLines: 3, tailLines: 2 } } };
		const [decision] = ratioPolicy(stateOf(entries, { ...settings, ...SPILL }, { promptTokens: 600, tools }));
		expect(decision?.placeholder.split("\n")[0]).toBe(
			"[snipped tool result — read_file (3000 bytes) archive=/spill/s1/0000.txt head=3 tail=2]",
		);
		expect(decision?.spill?.path).toBe("/spill/s1/0000.txt");
	});

	it("T3: leaves results under 1 KB and error results as they are", () => {
		const mixed = transcript([[text(1023), { content: text(5000), isError: true }, text(1024)], [text(10)]]);
		const decisions = ratioPolicy(stateOf(mixed, { ...settings, keepRecentResults: 0 }, { promptTokens: 900 }));
		expect(replaced(decisions)).toEqual([entryOf(mixed, "c1-2")]);
	});

	it("is off when the context window is unknown", () => {
		expect(ratioPolicy(stateOf(entries, { ...settings, contextWindow: 0 }, { promptTokens: 1e9 }))).toEqual([]);
	});

	it("treats a tool named like an Object property as unknown", () => {
		const odd = transcript([[{ content: text(3000), tool: "constructor" }], [text(10)]]);
		const [decision] = ratioPolicy(stateOf(odd, { ...settings, keepRecentResults: 0 }, { promptTokens: 900 }));
		expect(decision?.placeholder.split("\n")[0]).toBe(
			"[snipped tool result — constructor (3000 bytes) archive=none head=30 tail=15]",
		);
	});
});

describe("maskPolicy", () => {
	it("keeps only the newest maskKeep results and omits the rest with a short fixed stub", () => {
		const entries = transcript([[text(100)], [text(200)], [text(300)], [text(400)], [text(500)]]);
		const decisions = maskPolicy(stateOf(entries, { maskKeep: 2 }));
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c2-0"), entryOf(entries, "c3-0")]);
		expect(new Set(decisions.map((decision) => decision.placeholder))).toEqual(
			new Set(["[earlier read_file output omitted]"]),
		);
		const [spilled] = maskPolicy(stateOf(entries, { maskKeep: 2, ...SPILL }));
		expect(spilled?.placeholder).toBe(
			"[earlier read_file output omitted — saved to /spill/s1/0000.txt; read_file to recover]",
		);
	});
});

describe("clearPolicy", () => {
	const entries = transcript([[text(4000)], [text(4000)], [text(4000)], [text(4000)]]);
	const settings: Partial<ContextSettings> = { clearTriggerTokens: 1000, clearKeep: 1, clearMinTokens: 10 };

	it("clears every result outside the newest clearKeep once the trigger is reached", () => {
		expect(clearPolicy(stateOf(entries, settings, { promptTokens: 999 }))).toEqual([]);
		const decisions = clearPolicy(stateOf(entries, settings, { promptTokens: 1000 }));
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c2-0"), entryOf(entries, "c3-0")]);
		expect(decisions[0]?.placeholder).toBe("[tool result cleared]");
		const [spilled] = clearPolicy(stateOf(entries, { ...settings, ...SPILL }, { promptTokens: 1000 }));
		expect(spilled?.placeholder).toBe("[tool result cleared — saved to /spill/s1/0000.txt; read_file to recover]");
	});

	it("does nothing when it would clear fewer than clearMinTokens tokens", () => {
		expect(clearPolicy(stateOf(entries, { ...settings, clearMinTokens: 1_000_000 }, { promptTokens: 5000 }))).toEqual(
			[],
		);
	});
});

describe("every policy", () => {
	const policies: [string, Policy, Partial<ContextSettings>][] = [
		["rounds", roundsPolicy, { keepToolRounds: 0 }],
		["budget", budgetPolicy, { historyBudgetBytes: 100, keepRecentResults: 0 }],
		["ratio", ratioPolicy, { contextWindow: 100, keepRecentResults: 0 }],
		["mask", maskPolicy, { maskKeep: 0 }],
		["clear", clearPolicy, { clearTriggerTokens: 0, clearKeep: 0, clearMinTokens: 0 }],
	];
	const entries = transcript([
		[text(5000), { content: text(5000), tool: "ask_user" }, { content: text(5000), tool: "delegate_task" }],
		[text(5000), text(5000)],
		[text(5000), text(5000), text(5000), text(5000)],
	]);

	for (const [name, policy, settings] of policies) {
		it(`${name}: never touches an exempt tool or the in-flight round, and marks decisions with the round`, () => {
			const decisions = policy(stateOf(entries, settings, { promptTokens: 1e6, round: 7 }));
			expect(replaced(decisions)).toEqual([
				entryOf(entries, "c1-0"),
				entryOf(entries, "c2-0"),
				entryOf(entries, "c2-1"),
			]);
			expect(decisions.every((decision) => decision.round === 7)).toBe(true);
		});
	}

	it("S4: without a readable spill directory every placeholder is bare and names no file", () => {
		for (const [, policy, settings] of policies) {
			for (const spill of [
				{ spillDir: "/spill/s1", spillAvailable: false },
				{ spillDir: "off", spillAvailable: true },
			]) {
				const decisions = results(policy(stateOf(entries, { ...settings, ...spill }, { promptTokens: 1e6 })));
				expect(decisions.length).toBeGreaterThan(0);
				for (const decision of decisions) {
					expect(decision.spill).toBeUndefined();
					expect(decision.placeholder).not.toContain("/spill");
				}
			}
		}
	});
});

describe("spill positions", () => {
	const spilled = (position: number): ReplaceDecision => ({
		kind: "replace",
		round: 1,
		entry: 1000 + position,
		toolName: "shell",
		reason: "elide",
		placeholder: "[x]",
		bytesBefore: 100,
		bytesAfter: 3,
		spill: { position, path: `/spill/s1/${String(position).padStart(4, "0")}.txt` },
	});
	const settings = { historyBudgetBytes: 1000, keepRecentResults: 0, ...SPILL };

	it("S1: an 800-byte result spills to position 0 and the stub names that file", () => {
		const entries = transcript([[text(800)], [text(800)]]);
		const [decision] = budgetPolicy(stateOf(entries, settings));
		expect(decision).toEqual({
			kind: "replace",
			round: 3,
			entry: entryOf(entries, "c1-0"),
			toolName: "read_file",
			reason: "elide",
			placeholder: "[earlier read_file result elided — 800 bytes saved to /spill/s1/0000.txt; read_file to recover.]",
			bytesBefore: 800,
			bytesAfter: 98,
			spill: { position: 0, path: "/spill/s1/0000.txt" },
		});
	});

	it("S2: files are named by ledger position alone, never by a tool name or call id", () => {
		const entries = transcript([[{ content: text(800), tool: "../../etc" }], [text(800)]]);
		const spillAfter = (ledger: ReplaceDecision[]) => budgetPolicy(stateOf(entries, settings, { ledger }))[0]?.spill;
		expect(spillAfter([spilled(0), spilled(1), spilled(2)])).toEqual({ position: 3, path: "/spill/s1/0003.txt" });
		expect(spillAfter([spilled(11)])).toEqual({ position: 12, path: "/spill/s1/0012.txt" });
		expect(spillAfter([])?.path).toBe("/spill/s1/0000.txt");
	});

	it("S2: one pass numbers its spills in order, and a skipped result takes no position", () => {
		const entries = transcript([[text(800), "tiny", text(800)], [text(800)]]);
		const decisions = budgetPolicy(stateOf(entries, { ...settings, historyBudgetBytes: 100 }));
		expect(decisions.map((decision) => decision.spill?.position)).toEqual([0, 1]);
		expect(replaced(decisions)).toEqual([entryOf(entries, "c1-0"), entryOf(entries, "c1-2")]);
	});

	it("E5: a result smaller than its stub is never replaced, so nothing is spilled", () => {
		const entries = transcript([["twelve bytes"], ["twelve bytes"], ["twelve bytes"]]);
		expect(budgetPolicy(stateOf(entries, { ...settings, historyBudgetBytes: 10 }))).toEqual([]);
	});
});

describe("T3: a snipped result replaced again", () => {
	it("keeps the original size and the snip's archive", () => {
		const entries = transcript([[text(3000)], [text(10)], [text(10)]]);
		const snips = ratioPolicy(
			stateOf(entries, { contextWindow: 1000, keepRecentResults: 0, ...SPILL }, { promptTokens: 900 }),
		);
		expect(snips.map((decision) => decision.spill?.position)).toEqual([0]);
		const [prune] = results(roundsPolicy(stateOf(entries, { keepToolRounds: 1, ...SPILL }, { ledger: snips })));
		expect(prune).toMatchObject({
			reason: "prune",
			bytesBefore: 3000,
			spill: { position: 0, path: "/spill/s1/0000.txt" },
		});
		expect(prune?.placeholder).toBe(
			"[earlier read_file output pruned — 3000 chars saved to /spill/s1/0000.txt; read_file to recover]",
		);
	});

	it("a result replaced for any other reason is never replaced again", () => {
		const entries = transcript([[text(3000)], [text(10)], [text(10)]]);
		const masks = maskPolicy(stateOf(entries, { maskKeep: 0 }));
		expect(masks).toHaveLength(1);
		expect(roundsPolicy(stateOf(entries, { keepToolRounds: 0 }, { ledger: masks }))).toEqual([]);
		expect(
			clearPolicy(stateOf(entries, { clearTriggerTokens: 0, clearKeep: 0, clearMinTokens: 0 }, { ledger: masks })),
		).toEqual([]);
	});
});

describe("S3: barePlaceholder", () => {
	const entries = transcript([[{ content: text(3000), tool: "shell" }], [text(10)], [text(10)]]);
	const all = (policy: Policy, settings: Partial<ContextSettings>) =>
		policy(stateOf(entries, { ...settings, ...SPILL }, { promptTokens: 1e6 }))[0] as ReplaceDecision;

	it("rebuilds each kind of placeholder without the path, with the re-run hint back", () => {
		const bare = (decision: ReplaceDecision) => barePlaceholder(decision)?.placeholder;
		expect(bare(all(roundsPolicy, { keepToolRounds: 0 }))).toBe(
			"[earlier shell output pruned — 3000 chars; re-run the tool if you need it again]",
		);
		expect(bare(all(budgetPolicy, { historyBudgetBytes: 100, keepRecentResults: 0 }))).toBe(
			"[earlier shell result elided to reclaim context — 3000 bytes. Re-run the tool if you still need this output.]",
		);
		expect(bare(all(maskPolicy, { maskKeep: 0 }))).toBe("[earlier shell output omitted]");
		expect(bare(all(clearPolicy, { clearTriggerTokens: 0, clearKeep: 0, clearMinTokens: 0 }))).toBe(
			"[tool result cleared]",
		);
		const snip = all(ratioPolicy, { contextWindow: 100, keepRecentResults: 0 });
		expect(bare(snip)).toBe(snipToolResult(text(3000), { toolName: "shell", geometry: READ_ONLY_SNIP }));
	});

	it("drops the spill, updates bytesAfter and keeps everything else", () => {
		const decision = all(budgetPolicy, { historyBudgetBytes: 100, keepRecentResults: 0 });
		const bare = barePlaceholder(decision);
		expect(bare).not.toHaveProperty("spill");
		expect(bare).toMatchObject({ entry: decision.entry, round: decision.round, reason: "elide", bytesBefore: 3000 });
		expect(bare?.bytesAfter).toBe(Buffer.byteLength(bare?.placeholder ?? ""));
	});

	it("applies the size guard again: undefined when the bare stub would not be smaller than the original", () => {
		const small = transcript([[text(100)], [text(10)], [text(10)]]);
		const settings = { historyBudgetBytes: 50, keepRecentResults: 0, spillDir: "/s", spillAvailable: true };
		const [decision] = budgetPolicy(stateOf(small, settings));
		expect(decision?.placeholder).toBe(
			"[earlier read_file result elided — 100 bytes saved to /s/0000.txt; read_file to recover.]",
		);
		expect(barePlaceholder(decision as ReplaceDecision)).toBeUndefined();
	});

	it("returns a decision without a spill unchanged", () => {
		const decision = budgetPolicy(
			stateOf(entries, { historyBudgetBytes: 100, keepRecentResults: 0 }),
		)[0] as ReplaceDecision;
		expect(barePlaceholder(decision)).toBe(decision);
	});
});
