// The model table: windows, limits, vision and prices as data. Users override any entry in settings
// (`models.<id>`); unknown models get their provider's defaults.

/** Prices in US dollars per million tokens, and cache multipliers on the base input price. */
export interface Prices {
	input: number;
	output: number;
	/** A cache read costs input × this (Anthropic 0.1, OpenAI 0.5 / 0.25 / 0.1 by family, DeepSeek ≈ 0.1). */
	cacheReadMultiplier: number;
	/** A cache write costs input × this (Anthropic 1.25 for the 5-minute TTL, 2 for 1 hour; OpenAI 1: no premium). */
	cacheWriteMultiplier: number;
}

export interface ModelInfo {
	/** "anthropic" | "openai" (OpenAI-compatible servers included). */
	provider: string;
	/** Context window in tokens. */
	contextWindow: number;
	/** Largest output in tokens. */
	maxOutput: number;
	vision: boolean;
	prices: Prices;
	/** Below this many prompt tokens the provider caches nothing. */
	minCacheTokens: number;
	/** How long an unused cache entry lives, in seconds. */
	cacheTtlSeconds: number;
}

const anthropic = (
	input: number,
	output: number,
	minCacheTokens: number,
	contextWindow = 200_000,
	maxOutput = 64_000,
): ModelInfo => ({
	provider: "anthropic",
	contextWindow,
	maxOutput,
	vision: true,
	prices: { input, output, cacheReadMultiplier: 0.1, cacheWriteMultiplier: 1.25 },
	minCacheTokens,
	cacheTtlSeconds: 300,
});

const openai = (
	input: number,
	output: number,
	cacheReadMultiplier: number,
	contextWindow: number,
	maxOutput: number,
	vision = true,
): ModelInfo => ({
	provider: "openai",
	contextWindow,
	maxOutput,
	vision,
	prices: { input, output, cacheReadMultiplier, cacheWriteMultiplier: 1 },
	minCacheTokens: 1024,
	cacheTtlSeconds: 600,
});

/** Known models, matched by the longest key that the model id starts with. */
export const MODELS: Readonly<Record<string, ModelInfo>> = {
	"claude-opus-4-6": anthropic(5, 25, 4096, 200_000, 128_000),
	"claude-opus-4-5": anthropic(5, 25, 4096),
	"claude-opus-4-1": anthropic(15, 75, 1024, 200_000, 32_000),
	"claude-opus-4": anthropic(15, 75, 1024, 200_000, 32_000),
	"claude-sonnet-4-6": anthropic(3, 15, 2048),
	"claude-sonnet-4-5": anthropic(3, 15, 1024),
	"claude-sonnet-4": anthropic(3, 15, 1024),
	"claude-haiku-4-5": anthropic(1, 5, 4096),
	"claude-3-5-haiku": anthropic(0.8, 4, 2048, 200_000, 8_192),
	"claude-3-7-sonnet": anthropic(3, 15, 1024),
	"gpt-5-nano": openai(0.05, 0.4, 0.1, 400_000, 128_000),
	"gpt-5-mini": openai(0.25, 2, 0.1, 400_000, 128_000),
	"gpt-5": openai(1.25, 10, 0.1, 400_000, 128_000),
	"gpt-4.1-nano": openai(0.1, 0.4, 0.25, 1_047_576, 32_768),
	"gpt-4.1-mini": openai(0.4, 1.6, 0.25, 1_047_576, 32_768),
	"gpt-4.1": openai(2, 8, 0.25, 1_047_576, 32_768),
	"gpt-4o-mini": openai(0.15, 0.6, 0.5, 128_000, 16_384),
	"gpt-4o": openai(2.5, 10, 0.5, 128_000, 16_384),
	o3: openai(2, 8, 0.25, 200_000, 100_000),
	"o4-mini": openai(1.1, 4.4, 0.25, 200_000, 100_000),
	"deepseek-chat": { ...openai(0.28, 0.42, 0.1, 128_000, 8_192, false), minCacheTokens: 64 },
	"deepseek-reasoner": { ...openai(0.28, 0.42, 0.1, 128_000, 64_000, false), minCacheTokens: 64 },
};

/** A settings entry that changes some fields of a model's row. */
export type ModelOverride = Omit<Partial<ModelInfo>, "prices"> & { prices?: Partial<Prices> };

/** Defaults for a model the table does not know, by provider. */
const FALLBACK: Readonly<Record<string, ModelInfo>> = {
	anthropic: anthropic(3, 15, 1024),
	openai: openai(0, 0, 0.5, 128_000, 8_192),
};

/**
 * The table entry for `provider:model`, with `overrides` (from settings, keyed by "provider:model" or by the bare
 * model id) applied on top.
 * Never fails: unknown models get their provider's defaults (an unknown OpenAI-compatible model is priced at 0).
 */
export function modelInfo(
	provider: string,
	model: string,
	overrides: Readonly<Record<string, ModelOverride>> = {},
): ModelInfo {
	const key = Object.keys(MODELS)
		.filter((candidate) => model === candidate || model.startsWith(candidate) || model.includes(`/${candidate}`))
		.sort((a, b) => b.length - a.length)[0];
	const base = (key ? MODELS[key] : undefined) ?? FALLBACK[provider] ?? FALLBACK.openai!;
	const override = overrides[`${provider}:${model}`] ?? overrides[model] ?? {};
	return { ...base, ...override, prices: { ...base.prices, ...(override.prices ?? {}) } };
}

/** Splits "openai:gpt-4o" into provider and model; undefined when there is no known provider prefix. */
export function parseModelId(id: string): { provider: string; model: string } | undefined {
	const index = id.indexOf(":");
	if (index <= 0 || index === id.length - 1) return undefined;
	const provider = id.slice(0, index);
	return provider === "openai" || provider === "anthropic" ? { provider, model: id.slice(index + 1) } : undefined;
}
