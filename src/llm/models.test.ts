import { describe, expect, it } from "vitest";
import { modelInfo, parseModelId } from "./models.js";

describe("model table", () => {
	it("matches dated ids by the longest known prefix", () => {
		const sonnet = modelInfo("anthropic", "claude-sonnet-4-5-20250929");
		expect(sonnet.contextWindow).toBe(200_000);
		expect(sonnet.prices.cacheWriteMultiplier).toBe(1.25);
		expect(modelInfo("openai", "gpt-4o-mini-2024-07-18").prices.input).toBe(0.15);
		expect(modelInfo("openai", "gpt-4o").prices.input).toBe(2.5);
		expect(modelInfo("openai", "openrouter/openai/gpt-4.1").prices.cacheReadMultiplier).toBe(0.25);
	});

	it("falls back to provider defaults and applies overrides", () => {
		expect(modelInfo("openai", "llama3.1:8b").contextWindow).toBe(128_000);
		const custom = modelInfo("openai", "llama3.1:8b", { "llama3.1:8b": { contextWindow: 8192, prices: { input: 1 } } });
		expect(custom.contextWindow).toBe(8192);
		expect(custom.prices.input).toBe(1);
		expect(custom.prices.cacheReadMultiplier).toBe(0.5);
		expect(modelInfo("openai", "qwen", { "openai:qwen": { contextWindow: 32768 } }).contextWindow).toBe(32768);
	});

	it("parses provider:model ids", () => {
		expect(parseModelId("openai:llama3.1:8b")).toEqual({ provider: "openai", model: "llama3.1:8b" });
		expect(parseModelId("gpt-4o")).toBeUndefined();
		expect(parseModelId("mistral:large")).toBeUndefined();
	});
});
