import type { Usage } from "../llm/types.js";

/** Why a response read what it read from the provider's prefix cache. */
export interface CacheAttribution {
	kind: "hit" | "cold_start" | "ttl_expiry" | "prefix_change" | "unexplained_miss";
	/** Share of the previous request's prompt that was read from cache (0–1). */
	reused: number;
	/** For a prefix change: the decisions that changed the prefix, e.g. "elision: prune ×3", "tool loaded: browser_click". */
	because?: string[];
}

/**
 * Attributes one response's cache figures. A request that reads (almost) all of the previous request from cache is a
 * hit; otherwise the miss is explained, in this order, by there being no previous request (cold start), by the time
 * since it (TTL expiry), or by the changes snowpea made to the prefix this round (prefix change, naming them); a miss
 * with none of these is unexplained — worth a look, since snowpea should be the only one changing the prefix.
 * Pure. `previousPromptTokens` is the previous response's `usage.input` in this session.
 */
export function attributeCache(input: {
	usage: Usage;
	previousPromptTokens: number | undefined;
	idleSeconds: number;
	ttlSeconds: number;
	changes: readonly string[];
}): CacheAttribution {
	const { usage, previousPromptTokens } = input;
	if (previousPromptTokens === undefined || previousPromptTokens <= 0) {
		return { kind: usage.cacheRead > 0 ? "hit" : "cold_start", reused: usage.cacheRead > 0 ? 1 : 0 };
	}
	const reused = Math.min(1, usage.cacheRead / previousPromptTokens);
	// Providers cache in steps (OpenAI: 128 tokens) and may leave the last block out: allow a small shortfall.
	const tolerance = Math.min(2_000, Math.max(128, previousPromptTokens * 0.05));
	if (usage.cacheRead >= previousPromptTokens - tolerance) return { kind: "hit", reused };
	if (input.idleSeconds > input.ttlSeconds) return { kind: "ttl_expiry", reused };
	if (input.changes.length > 0) return { kind: "prefix_change", reused, because: [...input.changes] };
	return { kind: "unexplained_miss", reused };
}
