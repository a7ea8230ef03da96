import type { ModelInfo } from "../llm/models.js";
import { estimateTokens } from "./tokens.js";

// One cost model, used twice: "auto" prices a rewrite with it online, and bench prices every policy with it offline.
// If the two disagreed, bench would flatter auto — so both call this module.

/** What a provider charges for prompt tokens, and how its prefix cache behaves. Prices in USD per million tokens. */
export interface PriceSheet {
	name: string;
	input: number;
	output: number;
	/** A cached token costs input × this. */
	cacheReadMultiplier: number;
	/** A token written to the cache costs input × this (1 = no premium). */
	cacheWriteMultiplier: number;
	/** Anthropic charges writes explicitly; OpenAI and DeepSeek cache silently at the normal price. */
	explicitWrites: boolean;
	/** Seconds an unused cache entry lives. */
	ttlSeconds: number;
	/** Below this many prompt tokens nothing is cached. */
	minCacheTokens: number;
	/** Cache hits count in steps of this many tokens (OpenAI: 128). */
	granularity: number;
}

/** The price sheets of `snowpea bench --prices`. */
export const PRICE_SHEETS = {
	anthropic: {
		name: "anthropic (claude-sonnet-4-5, 5-minute cache)",
		input: 3,
		output: 15,
		cacheReadMultiplier: 0.1,
		cacheWriteMultiplier: 1.25,
		explicitWrites: true,
		ttlSeconds: 300,
		minCacheTokens: 1024,
		granularity: 1,
	},
	openai: {
		name: "openai (gpt-5)",
		input: 1.25,
		output: 10,
		cacheReadMultiplier: 0.1,
		cacheWriteMultiplier: 1,
		explicitWrites: false,
		ttlSeconds: 600,
		minCacheTokens: 1024,
		granularity: 128,
	},
	deepseek: {
		name: "deepseek (deepseek-chat)",
		input: 0.28,
		output: 0.42,
		cacheReadMultiplier: 0.1,
		cacheWriteMultiplier: 1,
		explicitWrites: false,
		ttlSeconds: 3600,
		minCacheTokens: 64,
		granularity: 64,
	},
} as const satisfies Record<string, PriceSheet>;

export type PriceSheetName = keyof typeof PRICE_SHEETS;

/** The price sheet of a model table row. */
export function priceSheetFor(model: ModelInfo, name = model.provider): PriceSheet {
	const anthropic = model.provider === "anthropic";
	return {
		name,
		input: model.prices.input,
		output: model.prices.output,
		cacheReadMultiplier: model.prices.cacheReadMultiplier,
		cacheWriteMultiplier: model.prices.cacheWriteMultiplier,
		explicitWrites: anthropic,
		ttlSeconds: model.cacheTtlSeconds,
		minCacheTokens: model.minCacheTokens,
		granularity: anthropic ? 1 : 128,
	};
}

/** The billed figures of one request. Token counts are whole prompt tokens; cost is USD. */
export interface RequestCost {
	tokens: number;
	cacheRead: number;
	cacheWrite: number;
	/** Prompt tokens billed at the plain input price. */
	uncached: number;
	cost: number;
	/** True when the cached prefix is shorter than the previous request: something before its end changed. */
	rewrite: boolean;
}

/** A request as the cache sees it: its rendered pieces in the provider's prefix order (tools, system, messages). */
export type RequestSegments = readonly string[];

/**
 * Simulates one provider prefix cache over a sequence of requests: the cached part of a request is its longest common
 * prefix with the previous request, in whole tokens, when that request is still warm (within the TTL) and the prefix
 * reaches the minimum cacheable length. Token counts of segments are remembered by text, so unchanged history is
 * counted once.
 */
export class PrefixCache {
	private previous: { segments: RequestSegments; tokens: number; at: number } | undefined;
	private readonly counts = new Map<string, number>();

	constructor(
		readonly sheet: PriceSheet,
		private readonly count: (text: string) => number = estimateTokens,
	) {}

	/** Tokens of one segment (memoized). */
	tokensOf(segment: string): number {
		let tokens = this.counts.get(segment);
		if (tokens === undefined) {
			tokens = this.count(segment);
			this.counts.set(segment, tokens);
		}
		return tokens;
	}

	/** Tokens of a whole request. */
	tokensOfRequest(segments: RequestSegments): number {
		let total = 0;
		for (const segment of segments) total += this.tokensOf(segment);
		return total;
	}

	/** Tokens of the longest common prefix of two requests, in whole tokens. */
	commonPrefixTokens(a: RequestSegments, b: RequestSegments): number {
		let tokens = 0;
		const length = Math.min(a.length, b.length);
		for (let index = 0; index < length; index++) {
			const left = a[index] as string;
			const right = b[index] as string;
			if (left === right) {
				tokens += this.tokensOf(left);
				continue;
			}
			let shared = 0;
			const limit = Math.min(left.length, right.length);
			while (shared < limit && left.charCodeAt(shared) === right.charCodeAt(shared)) shared++;
			// the token that straddles the first differing character is not shared
			if (shared > 0) tokens += Math.max(0, this.count(left.slice(0, shared)) - 1);
			break;
		}
		return tokens;
	}

	/** What the cache would read for `segments` sent at `atSeconds`, without recording it. */
	cachedTokens(segments: RequestSegments, atSeconds: number): number {
		return this.lookup(segments, atSeconds).cached;
	}

	/** The shared prefix with the previous request (when warm) and what of it the provider bills as cached. */
	private lookup(segments: RequestSegments, atSeconds: number): { shared: number; cached: number; warm: boolean } {
		const previous = this.previous;
		if (!previous || atSeconds - previous.at > this.sheet.ttlSeconds) return { shared: 0, cached: 0, warm: false };
		const shared = this.commonPrefixTokens(previous.segments, segments);
		if (shared < this.sheet.minCacheTokens) return { shared, cached: 0, warm: true };
		return { shared, cached: Math.floor(shared / this.sheet.granularity) * this.sheet.granularity, warm: true };
	}

	/** Prices a request sent at `atSeconds` (plus `outputTokens` generated) and records it as the cache's state. */
	price(segments: RequestSegments, atSeconds: number, outputTokens = 0): RequestCost {
		const tokens = this.tokensOfRequest(segments);
		const { shared, cached: cacheRead, warm } = this.lookup(segments, atSeconds);
		// A rewrite changed something the previous request sent: its whole text is no longer a prefix of this one.
		const rewrite = warm && this.previous !== undefined && shared < this.previous.tokens;
		const writable = this.sheet.explicitWrites && tokens >= this.sheet.minCacheTokens;
		const cacheWrite = writable ? tokens - cacheRead : 0;
		const uncached = tokens - cacheRead - cacheWrite;
		const { input, output, cacheReadMultiplier, cacheWriteMultiplier } = this.sheet;
		const cost =
			((cacheRead * cacheReadMultiplier + cacheWrite * cacheWriteMultiplier + uncached) * input +
				outputTokens * output) /
			1e6;
		this.previous = { segments, tokens, at: atSeconds };
		return { tokens, cacheRead, cacheWrite, uncached, cost, rewrite };
	}
}

/** The figures a rewrite decision is priced from. Tokens are prompt tokens; probabilities in [0, 1]. */
export interface RewriteQuote {
	/** Tokens the rewrite removes from every later request. */
	removedTokens: number;
	/** Tokens of the previous request after the first byte the rewrite changes (they were cached; now re-written). */
	suffixTokens: number;
	/** Expected number of further requests that will carry the saving. */
	futureRequests: number;
	/** The chance the provider's cache still holds the previous request (a cold cache makes a rewrite free). */
	warmProbability: number;
}

/**
 * Expected net saving of rewriting now, in input-token units (multiply by the input price for dollars); positive
 * means the rewrite pays.
 * Without the rewrite this request reads the suffix S from cache (r·S) and every later request reads the removed
 * tokens ΔT again (R·r·ΔT). With it, this request writes S − ΔT anew (w·(S − ΔT)); on a cold cache both options write
 * everything, so only the removed tokens differ. Net = R·r·ΔT + w·ΔT − p·(w − r)·S.
 * For OpenAI-style caches w = 1 (an uncached token at the plain price).
 */
export function rewriteBenefit(quote: RewriteQuote, sheet: PriceSheet): number {
	const write = sheet.cacheWriteMultiplier;
	const read = sheet.cacheReadMultiplier;
	const { removedTokens, suffixTokens, futureRequests, warmProbability } = quote;
	return (
		futureRequests * read * removedTokens + write * removedTokens - warmProbability * (write - read) * suffixTokens
	);
}

/**
 * The chance a cache entry is still warm after `idleSeconds`: certain up to 80 % of the TTL, then falling linearly to
 * zero at the TTL (providers evict early under load), zero after.
 */
export function warmProbability(idleSeconds: number, sheet: PriceSheet): number {
	const ttl = sheet.ttlSeconds;
	if (idleSeconds <= 0.8 * ttl) return 1;
	if (idleSeconds >= ttl) return 0;
	return (ttl - idleSeconds) / (0.2 * ttl);
}
