import { describe, expect, it } from "vitest";
import { DEFAULT_CONTEXT_SETTINGS, resolveContextSettings } from "./settings.js";

const resolve = (environment: Record<string, string | undefined>, base = {}, policyExplicit = false) =>
	resolveContextSettings({ base, environment, policyExplicit });

describe("resolveContextSettings", () => {
	it("with nothing set gives the defaults, no warnings and no errors", () => {
		expect(resolveContextSettings({})).toEqual({ settings: DEFAULT_CONTEXT_SETTINGS, warnings: [], errors: [] });
		expect(DEFAULT_CONTEXT_SETTINGS.toolResultMaxBytes).toBe(0);
		expect(DEFAULT_CONTEXT_SETTINGS.historyBudgetBytes).toBe(0);
	});

	it("P1: an unset low-water mark, or one not below the budget, becomes half the budget", () => {
		expect(resolve({ CONTEXT_HISTORY_BUDGET_BYTES: "10000" }).settings.historyBudgetLowBytes).toBe(5000);
		const equal = resolve({ CONTEXT_HISTORY_BUDGET_BYTES: "10000", CONTEXT_HISTORY_BUDGET_LOW_BYTES: "10000" });
		expect(equal.settings.historyBudgetLowBytes).toBe(5000);
		const below = resolve({ CONTEXT_HISTORY_BUDGET_BYTES: "10000", CONTEXT_HISTORY_BUDGET_LOW_BYTES: "3000" });
		expect(below.settings.historyBudgetLowBytes).toBe(3000);
	});

	it("P1: negative values become 0", () => {
		const { settings, warnings } = resolve({ CONTEXT_KEEP_RECENT_RESULTS: "-4", CONTEXT_TOOL_RESULT_MAX_BYTES: "-1" });
		expect(settings.keepRecentResults).toBe(0);
		expect(settings.toolResultMaxBytes).toBe(0);
		expect(warnings).toEqual([]);
		expect(resolveContextSettings({ base: { maskKeep: -3 } }).settings.maskKeep).toBe(0);
	});

	it("P1: an unset budget leaves elision off and the policy as it was", () => {
		const { settings } = resolve({});
		expect(settings.historyBudgetBytes).toBe(0);
		expect(settings.policy).toBe("auto");
	});

	it("a budget turns the policy to budget unless the caller chose one", () => {
		expect(resolve({ CONTEXT_HISTORY_BUDGET_BYTES: "60000" }).settings.policy).toBe("budget");
		expect(resolve({}, { historyBudgetBytes: 60_000 }).settings.policy).toBe("budget");
		const chosen = resolve({ CONTEXT_HISTORY_BUDGET_BYTES: "60000" }, { policy: "mask" }, true);
		expect(chosen.settings.policy).toBe("mask");
	});

	it("warns when the budget policy has no budget", () => {
		expect(resolve({}, { policy: "budget" }, true).warnings).toEqual([
			'context.policy is "budget" but no history budget is set; nothing will be elided',
		]);
	});

	it("P2: the spill directory comes from the base, 'off' disables it, a custom directory is used as given", () => {
		expect(resolve({}, { spillDir: "/home/u/.snowpea/spill/s1" }).settings.spillDir).toBe("/home/u/.snowpea/spill/s1");
		expect(resolve({ CONTEXT_ELISION_SPILL_DIR: "off" }, { spillDir: "/a" }).settings.spillDir).toBe("off");
		expect(resolve({ CONTEXT_ELISION_SPILL_DIR: "/tmp/elided/run-7" }).settings.spillDir).toBe("/tmp/elided/run-7");
		expect(resolve({}).settings.spillDir).toBe(DEFAULT_CONTEXT_SETTINGS.spillDir);
	});

	it("a relative spill directory is ignored with a warning", () => {
		const { settings, warnings } = resolve({ CONTEXT_ELISION_SPILL_DIR: "spill" }, { spillDir: "/a" });
		expect(settings.spillDir).toBe("/a");
		expect(warnings).toEqual(['CONTEXT_ELISION_SPILL_DIR="spill" is not an absolute directory; keeping /a']);
	});

	it("C5: a value that is not an integer keeps the base value and adds one warning each", () => {
		const { settings, warnings } = resolve(
			{ CONTEXT_TOOL_RESULT_MAX_BYTES: "not-a-number", CONTEXT_KEEP_RECENT_RESULTS: "2.5" },
			{ keepRecentResults: 7 },
		);
		expect(settings.toolResultMaxBytes).toBe(0);
		expect(settings.keepRecentResults).toBe(7);
		expect(warnings).toEqual([
			'CONTEXT_TOOL_RESULT_MAX_BYTES="not-a-number" is not an integer; keeping 0',
			'CONTEXT_KEEP_RECENT_RESULTS="2.5" is not an integer; keeping 7',
		]);
	});

	it("an empty value counts as unset", () => {
		const { settings, warnings } = resolve(
			{ CONTEXT_HISTORY_BUDGET_BYTES: "", CONTEXT_ELISION_SPILL_DIR: "" },
			{ spillDir: "/a" },
		);
		expect(settings.historyBudgetBytes).toBe(0);
		expect(settings.spillDir).toBe("/a");
		expect(warnings).toEqual([]);
	});

	it("C5: reads the per-result cap", () => {
		expect(resolve({ CONTEXT_TOOL_RESULT_MAX_BYTES: "500" }).settings.toolResultMaxBytes).toBe(500);
	});

	it("a snip ratio at or above the compact ratio is an error", () => {
		const { errors } = resolveContextSettings({ base: { toolResultSnipRatio: 0.9, compactRatio: 0.85 } });
		expect(errors).toEqual(["context.toolResultSnipRatio (0.9) must be below context.compactRatio (0.85)"]);
	});

	it("does not change the base it was given", () => {
		const base = { exemptTools: ["ask_user"], historyBudgetBytes: 100 };
		resolveContextSettings({ base }).settings.exemptTools.push("shell");
		expect(base).toEqual({ exemptTools: ["ask_user"], historyBudgetBytes: 100 });
	});
});
