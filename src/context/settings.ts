import { isAbsolute } from "node:path";

/** Every policy that can decide what stale tool output the model is shown (the settings schema accepts these). */
export const CONTEXT_POLICIES = ["off", "rounds", "budget", "ratio", "mask", "clear", "auto"] as const;

/** What auto's rewrites may spend (see ContextSettings.autoSpend). */
export const AUTO_SPEND = ["expected", "saved"] as const;
export type AutoSpend = (typeof AUTO_SPEND)[number];

/** Which policy decides what stale tool output the model is shown. */
export type ContextPolicy = (typeof CONTEXT_POLICIES)[number];

/** Everything the context engine is configured by. Sizes in UTF-8 bytes, windows and triggers in tokens. */
export interface ContextSettings {
	policy: ContextPolicy;
	/** Per-result cap applied when a result enters the transcript; 0 = off. */
	toolResultMaxBytes: number;
	/** rounds: how many recent tool rounds stay verbatim; 0 prunes every round but the in-flight one. */
	keepToolRounds: number;
	/**
	 * auto: how many recent tool rounds stay verbatim. Fewer than rounds' 6 because auto rewrites rarely. Measured on
	 * the shared corpus (Anthropic prices, long arguments elided at 500 chars): keeping 6 / 5 / 4 rounds gives
	 * −31.1% / −32.5% / −33.7% vs off at recall 0.926 / 0.918 / 0.897; 5 is the cheapest that keeps recall above 0.91.
	 */
	autoKeepToolRounds: number;
	/**
	 * rounds and auto: once every result of a call is stale (replaced, or pruned but too small for a placeholder), its
	 * string argument values of at least this many characters are elided too (src/context/arguments.ts); 0 = off. Measured with auto on the shared corpus:
	 * 0 / 2000 / 1000 / 500 / 300 chars give −26.8% / −30.6% / −31.7% / −32.5% / −32.8% vs off (keeping 5 rounds)
	 * at recall 0.939 / 0.932 / 0.923 / 0.918 / 0.913.
	 */
	elideArgumentChars: number;
	/**
	 * auto: what a rewrite may spend. "expected": whatever the saving it expects over the rest of the session pays
	 * for (the cheapest overall). "saved": only what earlier rewrites have already saved against sending everything
	 * (src/context/savings.ts), so a session never costs more than "off" would have, wherever it ends — at the price
	 * of rewriting later and less (measured on the shared corpus: −13% vs off instead of −32%, no run above off). One
	 * exception: near the compaction threshold everything stale goes regardless, as in "expected".
	 */
	autoSpend: AutoSpend;
	/** budget: elide when live tool-result bytes exceed this; 0 = off. */
	historyBudgetBytes: number;
	/** budget: drain down to this; resolved to budget/2 when unset (0) or not below the budget. */
	historyBudgetLowBytes: number;
	/** budget and ratio: the newest results that are never replaced (the in-flight round is protected on top). */
	keepRecentResults: number;
	/** Absolute directory for this session's spill files, or "off" for destructive placeholders. */
	spillDir: string | "off";
	/** False when a spilled result could not be read back (no read_file, or spillDir unreachable): bare placeholders. */
	spillAvailable: boolean;
	/** The model's context window in tokens; 0 = unknown, which turns "ratio" off. */
	contextWindow: number;
	/** ratio: snip stale results once the prompt reaches this share of the window. */
	toolResultSnipRatio: number;
	/** Share of the window where compaction starts; snipping must start below it. */
	compactRatio: number;
	/** Tools whose results no policy ever replaces. */
	exemptTools: string[];
	/** mask: how many of the newest results stay verbatim. */
	maskKeep: number;
	/** clear: prompt tokens at which clearing starts. */
	clearTriggerTokens: number;
	/** clear: how many of the newest results stay verbatim. */
	clearKeep: number;
	/** clear: a pass that would clear fewer tokens than this does nothing (not worth a cache write). */
	clearMinTokens: number;
	/** skill_view bodies older than this many most recent views become a one-line reload marker. */
	skillViewsKept: number;
}

export const DEFAULT_CONTEXT_SETTINGS: ContextSettings = {
	policy: "auto",
	toolResultMaxBytes: 0,
	keepToolRounds: 6,
	autoKeepToolRounds: 5,
	elideArgumentChars: 500,
	autoSpend: "expected",
	historyBudgetBytes: 0,
	historyBudgetLowBytes: 0,
	keepRecentResults: 3,
	spillDir: "off",
	spillAvailable: true,
	contextWindow: 0,
	toolResultSnipRatio: 0.6,
	compactRatio: 0.85,
	exemptTools: ["delegate_task", "ask_user", "skill_view"],
	maskKeep: 10,
	clearTriggerTokens: 100_000,
	clearKeep: 3,
	clearMinTokens: 20_000,
	skillViewsKept: 2,
};

type CountKey = {
	[Key in keyof ContextSettings]: ContextSettings[Key] extends number ? Key : never;
}[keyof ContextSettings];

/** Environment variables (seed 003) and the setting each one sets. */
const ENVIRONMENT_COUNTS: [string, CountKey][] = [
	["CONTEXT_TOOL_RESULT_MAX_BYTES", "toolResultMaxBytes"],
	["CONTEXT_HISTORY_BUDGET_BYTES", "historyBudgetBytes"],
	["CONTEXT_HISTORY_BUDGET_LOW_BYTES", "historyBudgetLowBytes"],
	["CONTEXT_KEEP_RECENT_RESULTS", "keepRecentResults"],
];

const COUNTS: CountKey[] = [
	"toolResultMaxBytes",
	"keepToolRounds",
	"autoKeepToolRounds",
	"elideArgumentChars",
	"historyBudgetBytes",
	"historyBudgetLowBytes",
	"keepRecentResults",
	"contextWindow",
	"maskKeep",
	"clearTriggerTokens",
	"clearKeep",
	"clearMinTokens",
];

export interface ResolvedContextSettings {
	settings: ContextSettings;
	/** One line per ignored value; the run goes on. */
	warnings: string[];
	/** One line per contradiction; the caller refuses to start. */
	errors: string[];
}

/**
 * Settings = defaults ← `base` ← the environment. Pure; never throws.
 * Environment variables: CONTEXT_TOOL_RESULT_MAX_BYTES, CONTEXT_HISTORY_BUDGET_BYTES,
 * CONTEXT_HISTORY_BUDGET_LOW_BYTES, CONTEXT_KEEP_RECENT_RESULTS (integers) and CONTEXT_ELISION_SPILL_DIR (an
 * absolute directory, or "off"). An empty value counts as unset; a value that is not an integer (or not an absolute
 * directory) keeps the base value and adds one warning; negative counts become 0; a low-water mark that is unset or
 * not below the budget becomes half the budget. When `policyExplicit` is not true and a history budget is set, the
 * policy becomes "budget": seed 003's own configuration gives its own behaviour.
 */
export function resolveContextSettings(input: {
	base?: Partial<ContextSettings>;
	policyExplicit?: boolean;
	environment?: Record<string, string | undefined>;
}): ResolvedContextSettings {
	const warnings: string[] = [];
	const errors: string[] = [];
	const settings: ContextSettings = { ...DEFAULT_CONTEXT_SETTINGS, ...input.base };
	settings.exemptTools = [...settings.exemptTools];
	const environment = input.environment ?? {};

	for (const [name, key] of ENVIRONMENT_COUNTS) {
		const raw = environment[name]?.trim();
		if (raw === undefined || raw === "") continue;
		if (/^[+-]?\d+$/.test(raw)) settings[key] = Number(raw);
		else warnings.push(`${name}=${JSON.stringify(raw)} is not an integer; keeping ${settings[key]}`);
	}
	const spillDir = environment.CONTEXT_ELISION_SPILL_DIR?.trim();
	if (spillDir === "off" || (spillDir && isAbsolute(spillDir))) settings.spillDir = spillDir;
	else if (spillDir) {
		warnings.push(
			`CONTEXT_ELISION_SPILL_DIR=${JSON.stringify(spillDir)} is not an absolute directory; keeping ${settings.spillDir}`,
		);
	}

	for (const key of COUNTS) {
		const value = settings[key];
		if (Number.isFinite(value)) settings[key] = Math.max(0, Math.floor(value));
		else {
			warnings.push(`context.${key} (${value}) is not a number; using ${DEFAULT_CONTEXT_SETTINGS[key]}`);
			settings[key] = DEFAULT_CONTEXT_SETTINGS[key];
		}
	}
	settings.historyBudgetLowBytes = lowWaterMark(settings.historyBudgetBytes, settings.historyBudgetLowBytes);
	if (input.policyExplicit !== true && settings.historyBudgetBytes > 0) settings.policy = "budget";
	if (settings.policy === "budget" && settings.historyBudgetBytes === 0) {
		warnings.push('context.policy is "budget" but no history budget is set; nothing will be elided');
	}

	for (const key of ["toolResultSnipRatio", "compactRatio"] as const) {
		const value = settings[key];
		if (!(value > 0 && value <= 1)) errors.push(`context.${key} (${value}) must be above 0 and at most 1`);
	}
	if (settings.toolResultSnipRatio >= settings.compactRatio) {
		errors.push(
			`context.toolResultSnipRatio (${settings.toolResultSnipRatio}) must be below context.compactRatio (${settings.compactRatio})`,
		);
	}
	return { settings, warnings, errors };
}

/** The low-water mark actually used: half the budget when `low` is 0 or not below `budget`; 0 without a budget. */
export function lowWaterMark(budget: number, low: number): number {
	if (budget <= 0) return 0;
	return low > 0 && low < budget ? low : Math.floor(budget / 2);
}
