import { describe, expect, it } from "vitest";
import { emptyUsage } from "../llm/types.js";
import { attributeCache } from "./cache-attribution.js";

const usage = (input: number, cacheRead: number) => ({ ...emptyUsage(), input, cacheRead });
const base = { idleSeconds: 10, ttlSeconds: 300, changes: [] as string[] };

describe("cache attribution", () => {
	it("calls the first request a cold start, and a full re-read a hit", () => {
		expect(attributeCache({ ...base, usage: usage(5000, 0), previousPromptTokens: undefined }).kind).toBe("cold_start");
		expect(attributeCache({ ...base, usage: usage(6000, 4990), previousPromptTokens: 5000 })).toEqual({
			kind: "hit",
			reused: 0.998,
		});
	});

	it("explains a miss by idle time past the TTL before anything else", () => {
		const miss = attributeCache({
			...base,
			idleSeconds: 400,
			changes: ["elision: prune ×2"],
			usage: usage(6000, 0),
			previousPromptTokens: 5000,
		});
		expect(miss.kind).toBe("ttl_expiry");
	});

	it("names the decisions that changed the prefix", () => {
		const miss = attributeCache({
			...base,
			changes: ["elision: elide ×3"],
			usage: usage(4000, 1200),
			previousPromptTokens: 5000,
		});
		expect(miss).toEqual({ kind: "prefix_change", reused: 0.24, because: ["elision: elide ×3"] });
	});

	it("flags a miss nobody explains", () => {
		expect(attributeCache({ ...base, usage: usage(6000, 100), previousPromptTokens: 5000 }).kind).toBe(
			"unexplained_miss",
		);
	});
});
