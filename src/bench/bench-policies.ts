import { type ContextSettings, DEFAULT_CONTEXT_SETTINGS, resolveContextSettings } from "../context/settings.js";

/** One column of the bench: a name and the settings it changes from the engine's defaults. */
export interface BenchPolicy {
	name: string;
	settings: Partial<ContextSettings>;
}

/** The policies `snowpea bench` compares, in table order. Data only: a policy the engine learns is one more line. */
export const BENCH_POLICIES: readonly BenchPolicy[] = [
	{ name: "off", settings: { policy: "off" } },
	{ name: "rounds", settings: { policy: "rounds", keepToolRounds: 6 } },
	{
		name: "budget",
		settings: { policy: "budget", historyBudgetBytes: 60_000, historyBudgetLowBytes: 30_000, keepRecentResults: 3 },
	},
	{ name: "ratio", settings: { policy: "ratio", toolResultSnipRatio: 0.6, compactRatio: 0.85 } },
	// Lindenbauer et al. 2025, "The Complexity Trap": keep the last M = 10 observations.
	{ name: "mask", settings: { policy: "mask", maskKeep: 10 } },
	// Anthropic's context editing: at 100K input tokens keep the last 3 results, clear at least 20K.
	{ name: "clear", settings: { policy: "clear", clearTriggerTokens: 100_000, clearKeep: 3, clearMinTokens: 20_000 } },
	// snowpea's default: every rewrite priced against the cache write it causes (context/auto.ts).
	{ name: "auto", settings: { policy: "auto" } },
	// auto spending only what earlier rewrites saved: never dearer than off, wherever a run ends (context/savings.ts).
	{ name: "auto-saved", settings: { policy: "auto", autoSpend: "saved" } },
];

/** The name the hindsight-optimal schedule is reported under; not a policy the engine can run. */
export const ORACLE = "oracle";

/**
 * Where replaced results would be spilled. Nothing is written: the path only makes every placeholder byte-for-byte
 * the one snowpea sends with spilling on (its default), which names the file to read back.
 */
export const BENCH_SPILL_DIR = "/bench/spill";

/** The default context window for "ratio" (tokens), overridden by `--window`. */
export const DEFAULT_BENCH_WINDOW = 200_000;

/**
 * The full engine settings of a bench policy: the engine's defaults, spilling to {@link BENCH_SPILL_DIR}, the given
 * window, then the policy's own settings — normalized the way the agent normalizes them (environment ignored). Pure.
 */
export function benchSettings(policy: BenchPolicy, contextWindow = DEFAULT_BENCH_WINDOW): ContextSettings {
	const base: Partial<ContextSettings> = {
		...DEFAULT_CONTEXT_SETTINGS,
		spillDir: BENCH_SPILL_DIR,
		spillAvailable: true,
		contextWindow,
		...policy.settings,
	};
	return resolveContextSettings({ base, policyExplicit: true, environment: {} }).settings;
}

/** The bench policies named in `names` (in the order given), or the unknown names. */
export function selectPolicies(names: readonly string[]): { policies: BenchPolicy[] } | { unknown: string[] } {
	const unknown = names.filter((name) => !BENCH_POLICIES.some((policy) => policy.name === name));
	if (unknown.length > 0) return { unknown };
	return { policies: names.map((name) => BENCH_POLICIES.find((policy) => policy.name === name) as BenchPolicy) };
}
