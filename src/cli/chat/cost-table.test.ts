import { describe, expect, it } from "vitest";
import { costRows, formatCostTable, priceUsage } from "./cost-table.js";
import { statusLine } from "./status-line.js";

const anthropic = { input: 3, output: 15, cacheReadMultiplier: 0.1, cacheWriteMultiplier: 1.25 };

describe("priceUsage", () => {
	it("bills cache reads and writes at their multipliers and output at its own price", () => {
		// 1,000 uncached + 8,000 read (×0.1) + 1,000 written (×1.25) = 3,050 input-price tokens; 500 output
		const cost = priceUsage({ input: 10_000, cacheRead: 8_000, cacheWrite: 1_000, output: 500 }, anthropic);
		expect(cost).toBeCloseTo((3_050 * 3 + 500 * 15) / 1e6, 12);
	});
});

describe("formatCostTable", () => {
	it("has a row per request and a total", () => {
		const rows = costRows(
			[
				{ round: 1, usage: { input: 2_000, cacheRead: 0, cacheWrite: 2_000, output: 100 } },
				{ round: 2, usage: { input: 2_500, cacheRead: 2_000, cacheWrite: 500, output: 50 } },
			],
			anthropic,
		);
		const lines = formatCostTable(rows, "anthropic").split("\n");
		expect(lines[0]).toMatch(/^round\s+input\s+cached\s+written\s+output\s+cost$/);
		expect(lines[1]).toMatch(/^1\s+2,000\s+0\s+2,000\s+100\s+\$0\.0090$/);
		expect(lines[2]).toMatch(/^2\s+2,500\s+2,000\s+500\s+50\s+\$0\.0032$/);
		expect(lines[3]).toMatch(/^total\s+4,500\s+2,000\s+2,500\s+150\s+\$0\.0122$/);
		expect(lines[4]).toBe("2 requests, 44% of prompt tokens from cache, prices: anthropic");
		expect(formatCostTable([], "x")).toBe("no requests yet in this session");
	});
});

describe("statusLine", () => {
	it("shows model, context used of the window, cache hits, cost and mode", () => {
		expect(
			statusLine({
				modelId: "anthropic:claude-sonnet-4-5",
				contextTokens: 12_345,
				contextWindow: 200_000,
				cacheHitShare: 0.874,
				costUsd: 0.01234,
				mode: "plan",
			}),
		).toBe("anthropic:claude-sonnet-4-5 · context 12.3k/200k (6.2%) · cache 87% · $0.0123 · mode plan");
		expect(statusLine({ modelId: "m", contextWindow: 128_000, costUsd: 0, mode: "accept" })).toBe(
			"m · context –/128k · cache – · $0.0000 · mode accept",
		);
	});
});
