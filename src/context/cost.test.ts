import { describe, expect, it } from "vitest";
import { modelInfo } from "../llm/models.js";
import { PRICE_SHEETS, PrefixCache, priceSheetFor } from "./cost.js";

// One token per character makes every figure below exact.
const perCharacter = (text: string) => text.length;
const block = (letter: string, size: number) => letter.repeat(size);

describe("prefix cache simulation", () => {
	it("reads the longest common prefix with the previous request and writes the rest (anthropic)", () => {
		const cache = new PrefixCache(PRICE_SHEETS.anthropic, perCharacter);
		const first = cache.price([block("t", 1000), block("s", 500)], 0);
		expect(first).toMatchObject({ tokens: 1500, cacheRead: 0, cacheWrite: 1500, uncached: 0, rewrite: false });
		expect(first.cost).toBeCloseTo((1500 * 1.25 * 3) / 1e6, 12);
		const second = cache.price([block("t", 1000), block("s", 500), block("m", 300)], 10);
		expect(second).toMatchObject({ tokens: 1800, cacheRead: 1500, cacheWrite: 300, uncached: 0, rewrite: false });
		expect(second.cost).toBeCloseTo(((1500 * 0.1 + 300 * 1.25) * 3) / 1e6, 12);
	});

	it("counts a shared prefix inside a changed segment, minus the straddling token, and flags the rewrite", () => {
		const cache = new PrefixCache(PRICE_SHEETS.anthropic, perCharacter);
		cache.price([block("t", 1000), `${block("a", 400)}${block("b", 100)}`], 0);
		const rewritten = cache.price([block("t", 1000), `${block("a", 400)}${block("c", 10)}`], 5);
		expect(rewritten.cacheRead).toBe(1399);
		expect(rewritten.rewrite).toBe(true);
	});

	it("caches nothing below the minimum cacheable length", () => {
		const cache = new PrefixCache(PRICE_SHEETS.anthropic, perCharacter);
		cache.price([block("x", 800)], 0);
		const small = cache.price([block("x", 800), block("y", 10)], 1);
		expect(small).toMatchObject({ cacheRead: 0, cacheWrite: 0, uncached: 810 });
	});

	it("misses after the TTL and that miss is not a rewrite", () => {
		const cache = new PrefixCache(PRICE_SHEETS.anthropic, perCharacter);
		cache.price([block("x", 2000)], 0);
		const cold = cache.price([block("x", 2000), block("y", 10)], 301);
		expect(cold).toMatchObject({ cacheRead: 0, cacheWrite: 2010, rewrite: false });
	});

	it("openai: no write premium, hits in 128-token steps", () => {
		const cache = new PrefixCache(PRICE_SHEETS.openai, perCharacter);
		const first = cache.price([block("x", 2000)], 0);
		expect(first).toMatchObject({ cacheRead: 0, cacheWrite: 0, uncached: 2000 });
		const second = cache.price([block("x", 2000), block("y", 100)], 60);
		expect(second.cacheRead).toBe(1920);
		expect(second.uncached).toBe(180);
		expect(second.cost).toBeCloseTo(((1920 * 0.1 + 180) * 1.25) / 1e6, 12);
	});

	it("deepseek: small minimum, long TTL, cheap hits", () => {
		const cache = new PrefixCache(PRICE_SHEETS.deepseek, perCharacter);
		cache.price([block("x", 200)], 0);
		const second = cache.price([block("x", 200), block("y", 50)], 1800);
		expect(second.cacheRead).toBe(192);
		expect(second.cost).toBeCloseTo(((192 * 0.1 + 58) * 0.28) / 1e6, 12);
	});

	it("prices output tokens and derives a sheet from the model table", () => {
		const sheet = priceSheetFor(modelInfo("anthropic", "claude-opus-4-6"));
		expect(sheet).toMatchObject({ input: 5, cacheWriteMultiplier: 1.25, minCacheTokens: 4096, explicitWrites: true });
		const cache = new PrefixCache(PRICE_SHEETS.openai, perCharacter);
		expect(cache.price(["hi"], 0, 1000).cost).toBeCloseTo((2 * 1.25 + 1000 * 10) / 1e6, 12);
	});
});

describe("rewrite detection", () => {
	it("does not call an unchanged openai request a rewrite because hits count in 128-token steps", () => {
		const cache = new PrefixCache(PRICE_SHEETS.openai, perCharacter);
		cache.price([block("x", 2000)], 0);
		expect(cache.price([block("x", 2000), block("y", 100)], 10).rewrite).toBe(false);
		expect(cache.price([block("x", 1999), block("z", 200)], 20).rewrite).toBe(true);
	});
});
