import { describe, expect, it } from "vitest";
import { classifyHttpError, isContextLengthMessage, parseRetryAfter } from "./errors.js";
import { withRetries } from "./retry.js";
import type { ProviderEvent } from "./types.js";
import { emptyUsage } from "./types.js";

const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const ok: ProviderEvent = {
	type: "done",
	message: { role: "assistant", text: "hi", toolCalls: [] },
	stopReason: "stop",
	usage: emptyUsage(),
};

async function collect(events: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
	const all: ProviderEvent[] = [];
	for await (const event of events) all.push(event);
	return all;
}

function scripted(...attempts: ProviderEvent[][]) {
	let index = 0;
	return async function* () {
		yield* attempts[index++] ?? [];
	};
}

describe("withRetries", () => {
	it("retries a rate limit and honours retry-after, announcing each retry", async () => {
		const rateLimited: ProviderEvent = {
			type: "error",
			error: { kind: "rate_limit", message: "slow down", retryAfterMs: 2 },
		};
		const events = await collect(withRetries(scripted([rateLimited], [ok]), policy));
		expect(events).toEqual([{ type: "retry", attempt: 2, delayMs: 2, reason: "slow down" }, ok]);
	});

	it("gives up after maxAttempts and passes the last error through", async () => {
		const server: ProviderEvent = { type: "error", error: { kind: "server", message: "HTTP 503" } };
		const events = await collect(withRetries(scripted([server], [server], [server], [ok]), policy));
		expect(events.map((event) => event.type)).toEqual(["retry", "retry", "error"]);
	});

	it("never retries auth, context-length or mid-stream failures", async () => {
		const auth: ProviderEvent = { type: "error", error: { kind: "auth", message: "set KEY" } };
		expect(await collect(withRetries(scripted([auth], [ok]), policy))).toEqual([auth]);
		const cut: ProviderEvent[] = [
			{ type: "text-delta", text: "par" },
			{ type: "error", error: { kind: "network", message: "reset" } },
		];
		expect(await collect(withRetries(scripted(cut, [ok]), policy))).toEqual(cut);
	});

	it("stops waiting when aborted", async () => {
		const controller = new AbortController();
		controller.abort();
		const server: ProviderEvent = { type: "error", error: { kind: "server", message: "HTTP 500" } };
		const events = await collect(
			withRetries(scripted([server], [ok]), { ...policy, baseDelayMs: 10_000, maxDelayMs: 10_000 }, controller.signal),
		);
		expect(events.at(-1)).toEqual({
			type: "error",
			error: { kind: "aborted", message: "aborted while waiting to retry" },
		});
	});
});

describe("error classification", () => {
	it("names the variable to set on 401 and 403", () => {
		const error = classifyHttpError("OpenAI", 401, "Incorrect API key", "OPENAI_API_KEY");
		expect(error.kind).toBe("auth");
		expect(error.message).toContain("set OPENAI_API_KEY");
		expect(error.message).not.toContain("\n");
		expect(classifyHttpError("Anthropic", 403, "", "ANTHROPIC_API_KEY").kind).toBe("auth");
	});

	it("sorts statuses into kinds", () => {
		expect(classifyHttpError("X", 429, "", "K").kind).toBe("rate_limit");
		expect(classifyHttpError("X", 529, "overloaded", "K").kind).toBe("server");
		expect(classifyHttpError("X", 400, "This model's maximum context length is 8192 tokens", "K").kind).toBe(
			"context_length",
		);
		expect(classifyHttpError("X", 400, "prompt is too long: 210000 tokens > 200000 maximum", "K").kind).toBe(
			"context_length",
		);
		expect(classifyHttpError("X", 400, "invalid tool schema", "K").kind).toBe("bad_request");
		expect(isContextLengthMessage("all fine")).toBe(false);
	});

	it("reads retry-after in seconds, milliseconds and dates", () => {
		const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });
		expect(parseRetryAfter(headers({ "retry-after": "2" }))).toBe(2000);
		expect(parseRetryAfter(headers({ "retry-after-ms": "150" }))).toBe(150);
		const later = parseRetryAfter(headers({ "retry-after": new Date(Date.now() + 60_000).toUTCString() }));
		expect(later).toBeGreaterThan(50_000);
		expect(parseRetryAfter(headers({}))).toBeUndefined();
	});
});
