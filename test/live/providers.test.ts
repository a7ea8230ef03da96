// Live smoke tests against the real APIs: skipped unless a key is set. They cost a few cents.
import { describe, expect, it } from "vitest";
import { createProvider } from "../../src/llm/registry.js";
import type { ModelRequest, Provider, ProviderEvent } from "../../src/llm/types.js";

const request: ModelRequest = {
	system: [{ tier: "stable", text: "You are a terse assistant. Use the tool when asked to add numbers." }],
	tools: [
		{
			name: "add",
			description: "Add two integers.",
			parameters: {
				type: "object",
				properties: { a: { type: "integer" }, b: { type: "integer" } },
				required: ["a", "b"],
			},
		},
	],
	messages: [{ role: "user", content: [{ type: "text", text: "Use the add tool to add 2 and 3." }] }],
	maxOutputTokens: 200,
};

async function collect(provider: Provider): Promise<ProviderEvent[]> {
	const events: ProviderEvent[] = [];
	for await (const event of provider.stream(request, { sessionId: "snowpea-live-smoke" })) events.push(event);
	return events;
}

const cases = [
	{ key: "OPENAI_API_KEY", model: process.env.SNOWPEA_LIVE_OPENAI_MODEL ?? "openai:gpt-4o-mini" },
	{ key: "ANTHROPIC_API_KEY", model: process.env.SNOWPEA_LIVE_ANTHROPIC_MODEL ?? "anthropic:claude-haiku-4-5" },
];

describe("live providers", () => {
	for (const { key, model } of cases) {
		it.skipIf(!process.env[key])(`${model} streams a tool call with usage (needs ${key})`, async () => {
			const provider = createProvider(model);
			if ("error" in provider) throw new Error(provider.error);
			const events = await collect(provider);
			const done = events.find((event) => event.type === "done");
			expect(done?.type).toBe("done");
			if (done?.type !== "done") return;
			expect(done.message.toolCalls[0]?.name).toBe("add");
			expect(JSON.parse(done.message.toolCalls[0]?.arguments ?? "{}")).toEqual({ a: 2, b: 3 });
			expect(done.usage.input).toBeGreaterThan(0);
			expect(done.usage.output).toBeGreaterThan(0);
		});
	}
});
