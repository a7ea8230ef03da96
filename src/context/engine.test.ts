import { describe, expect, it, vi } from "vitest";
import { entryOf, stateOf, text, toolRound, transcript } from "../../test/support/context-fixtures.js";
import { runPolicy } from "./engine.js";
import type { Entry } from "./ledger.js";
import type { PolicyState } from "./policies.js";
import { liveToolResultBytes, project } from "./project.js";
import type { ContextPolicy, ContextSettings } from "./settings.js";

const budget = (overrides: Partial<ContextSettings>): Partial<ContextSettings> => ({ policy: "budget", ...overrides });
const requestBytes = (state: PolicyState, ledger = state.ledger) =>
	Buffer.byteLength(JSON.stringify(project(state.entries, ledger, state.round)));

describe("runPolicy with the budget policy", () => {
	it("E1: 300 live bytes under a 1000-byte budget: no decisions and no report", () => {
		const entries = transcript([[text(100)], [text(100)], [text(100)]]);
		expect(runPolicy(stateOf(entries, budget({ historyBudgetBytes: 1000, keepRecentResults: 0 })))).toEqual({
			decisions: [],
			report: undefined,
		});
	});

	it("E2: 600/600/400 over three rounds, budget 1000, low 500, keep 1: the oldest goes, the newest stays", () => {
		const entries = transcript([[text(600)], [text(600)], [text(400)]]);
		const state = stateOf(
			entries,
			budget({ historyBudgetBytes: 1000, historyBudgetLowBytes: 500, keepRecentResults: 1 }),
		);
		const { decisions, report } = runPolicy(state);
		const elided = decisions.map((decision) => decision.entry);
		expect(elided).toContain(entryOf(entries, "c1-0"));
		expect(elided).not.toContain(entryOf(entries, "c3-0"));
		expect(report?.kind).toBe("elide");
		expect(report?.count).toBe(decisions.length);
		expect(report?.reclaimedBytes).toBeGreaterThan(0);
		expect(report?.toolResultBytesAfter).toBeLessThanOrEqual(1000);
		expect(report?.toolResultBytesAfter).toBe(liveToolResultBytes(entries, decisions, state.round));
		expect(report?.reclaimedBytes).toBe(1600 - (report?.toolResultBytesAfter ?? 0));
	});

	it("E3: the in-flight round is protected beyond keepRecentResults", () => {
		const entries: Entry[] = transcript([[text(400), text(400), text(400), text(400), text(400)]]);
		const settings = budget({ historyBudgetBytes: 1000, keepRecentResults: 3 });
		expect(runPolicy(stateOf(entries, settings)).decisions).toEqual([]);

		entries.push(...toolRound(2, [text(400)]));
		const elided = runPolicy(stateOf(entries, settings)).decisions.map((decision) => decision.entry);
		expect(elided).toContain(entryOf(entries, "c1-0"));
		for (const kept of ["c1-3", "c1-4", "c2-0"]) expect(elided).not.toContain(entryOf(entries, kept));
	});

	it("E4: a second pass over the same history does nothing", () => {
		const entries = transcript([[text(600)], [text(600)], [text(400)]]);
		const state = stateOf(
			entries,
			budget({ historyBudgetBytes: 1000, historyBudgetLowBytes: 500, keepRecentResults: 1 }),
		);
		const { decisions } = runPolicy(state);
		expect(decisions.length).toBeGreaterThan(0);
		expect(runPolicy({ ...state, ledger: decisions })).toEqual({ decisions: [], report: undefined });
	});

	it("E5: results smaller than their own stub are never elided, so no spill is asked for", () => {
		const entries = transcript([["twelve bytes"], ["twelve bytes"], ["twelve bytes"]]);
		const settings = budget({ historyBudgetBytes: 10, keepRecentResults: 0, spillDir: "/spill", spillAvailable: true });
		expect(runPolicy(stateOf(entries, settings))).toEqual({ decisions: [], report: undefined });
	});

	it("E6: a keep window larger than the history leaves nothing to elide", () => {
		const entries = transcript([[text(500)], [text(500)]]);
		expect(runPolicy(stateOf(entries, budget({ historyBudgetBytes: 100, keepRecentResults: 5 }))).decisions).toEqual(
			[],
		);
	});

	it("E9: after earlier replacements a pass never grows the request, never brings text back, and converges", () => {
		const entries = transcript([[text(5000, "a")], [text(5000, "b")], [text(5000, "c")], [text(5000, "d")]]);
		const snipped = runPolicy(
			stateOf(entries, { policy: "ratio", contextWindow: 1000, keepRecentResults: 0 }, { promptTokens: 900 }),
		);
		expect(snipped.decisions.length).toBe(3);
		let state = stateOf(entries, budget({ historyBudgetBytes: 2000, keepRecentResults: 0 }), {
			ledger: snipped.decisions,
		});
		for (let pass = 0; pass < 3; pass++) {
			const { decisions } = runPolicy(state);
			const ledger = [...state.ledger, ...decisions];
			expect(requestBytes(state, ledger)).toBeLessThanOrEqual(requestBytes(state));
			const projected = project(entries, ledger, state.round);
			for (const item of ledger)
				if (item.kind === "replace") expect(projected[item.entry]).not.toEqual(entries[item.entry]?.message);
			if (pass === 0) expect(decisions.length).toBeGreaterThan(0);
			else expect(decisions).toEqual([]);
			state = { ...state, ledger };
		}
	});
});

describe("runPolicy", () => {
	it("runs the policy the settings name and reports its reason", () => {
		const entries = transcript([[text(3000)], [text(3000)], [text(3000)]]);
		const kinds: [ContextPolicy, string | undefined][] = [
			["off", undefined],
			["rounds", "prune"],
			["budget", "elide"],
			["ratio", "snip"],
			["mask", "mask"],
			["clear", "clear"],
		];
		for (const [policy, kind] of kinds) {
			const settings: Partial<ContextSettings> = {
				policy,
				keepToolRounds: 0,
				historyBudgetBytes: 100,
				keepRecentResults: 0,
				contextWindow: 100,
				maskKeep: 0,
				clearTriggerTokens: 0,
				clearKeep: 0,
				clearMinTokens: 0,
			};
			expect(runPolicy(stateOf(entries, settings, { promptTokens: 1000 })).report?.kind).toBe(kind);
		}
	});
});

describe("T5: placeholders carry nothing that depends on time or place", () => {
	const policies: [ContextPolicy, Partial<ContextSettings>][] = [
		["rounds", { keepToolRounds: 1 }],
		["budget", { historyBudgetBytes: 4000, keepRecentResults: 1 }],
		["ratio", { contextWindow: 1000, keepRecentResults: 1 }],
		["mask", { maskKeep: 1 }],
		["clear", { clearTriggerTokens: 100, clearKeep: 1, clearMinTokens: 0 }],
	];
	const rounds = [[text(3000, "p")], [text(3000, "q"), text(1500, "r")], [text(3000, "s")], [text(10)]];

	/** Builds a session round by round, as the agent does, and returns each round's request bytes. */
	function session(run: typeof runPolicy, settings: Partial<ContextSettings>): string[] {
		const entries: Entry[] = [];
		const requests: string[] = [];
		const state = stateOf(entries, settings, { promptTokens: 900 });
		for (const [index, results] of rounds.entries()) {
			entries.push(...toolRound(index + 1, results));
			state.round = index + 2;
			state.ledger.push(...run(state).decisions);
			requests.push(JSON.stringify(project(entries, state.ledger, state.round)));
		}
		return requests;
	}

	it("the same session gives the same bytes in two independent runs (fresh modules)", async () => {
		vi.resetModules();
		const fresh = await import("./engine.js");
		for (const [policy, settings] of policies) {
			const spill = { spillDir: "/spill/one", spillAvailable: true };
			expect(session(fresh.runPolicy, { policy, ...settings, ...spill })).toEqual(
				session(runPolicy, { policy, ...settings, ...spill }),
			);
		}
	});

	it("without spilling, the bytes do not depend on the spill directory", () => {
		for (const [policy, settings] of policies) {
			const one = session(runPolicy, { policy, ...settings, spillDir: "/spill/one", spillAvailable: false });
			const two = session(runPolicy, { policy, ...settings, spillDir: "/elsewhere/two", spillAvailable: false });
			expect(one).toEqual(two);
			expect(one.join("")).not.toContain("/spill/one");
		}
	});

	it("with spilling, the directory is the only difference", () => {
		for (const [policy, settings] of policies) {
			const one = session(runPolicy, { policy, ...settings, spillDir: "/spill/one", spillAvailable: true });
			const two = session(runPolicy, { policy, ...settings, spillDir: "/other/two", spillAvailable: true });
			expect(one.join("")).toContain("/spill/one/0000.txt");
			expect(one.map((request) => request.replaceAll("/spill/one/", "/other/two/"))).toEqual(two);
		}
	});
});
