import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import {
	type FakeProvider,
	type RecordedRequest,
	type ScriptStep,
	startFakeProvider,
} from "../support/fake-provider.js";

interface WireMessage {
	role: string;
	content: unknown;
	tool_call_id?: string;
}

const messagesOf = (request: RecordedRequest) => request.body.messages as WireMessage[];
const textOf = (message: WireMessage | undefined) =>
	typeof message?.content === "string" ? message.content : JSON.stringify(message?.content ?? "");
/** The compaction summary request: its last message is the instruction. */
const isSummary = (request: RecordedRequest) =>
	textOf(messagesOf(request).at(-1)).startsWith("Compact the conversation so far");

const SUMMARY =
	"## Task\nread the files\n## Decisions\nread them in order\n## Files touched\nf1.txt and on (read)\n## Current state\nreading\n## Next steps\nfinish";
const summaryStep: ScriptStep = { text: SUMMARY };
const read = (index: number): ScriptStep => ({
	toolCalls: [{ name: "read_file", arguments: JSON.stringify({ path: `f${index}.txt` }) }],
});

/** A working directory with files f1.txt … f20.txt of 40 distinct lines (about 2 KB, 500 tokens) each. */
function workDirectory(): string {
	const work = tempDir();
	for (let file = 1; file <= 20; file++) {
		const lines = Array.from({ length: 40 }, (_, line) => `file ${file} line ${line}: alpha${file * line} beta${line}`);
		writeFileSync(join(work, `f${file}.txt`), `${lines.join("\n")}\n`);
	}
	return work;
}

/** A SNOWPEA_HOME whose settings turn stale-output policies off and set the window. */
function homeWith(contextWindow?: number): string {
	const home = tempDir("snowpea-home-");
	const context = contextWindow === undefined ? { policy: "off" } : { policy: "off", contextWindow };
	writeFileSync(join(home, "settings.json"), JSON.stringify({ context }));
	return home;
}

const jsonEvents = (stdout: string) =>
	stdout
		.split("\n")
		.filter((line) => line.startsWith("{"))
		.map((line) => JSON.parse(line) as Record<string, unknown>);

describe.skipIf(!cliBuilt)("summary compaction, end to end", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	it("triggered by size: the summary request shares the whole previous prefix, the tail stays verbatim, and a resumed session rebuilds the same bytes", async () => {
		// fixed prefix ≈ 2,600 tokens; window 8,000 → trigger at 6,800, tail budget 2,000
		const home = homeWith(8000);
		const work = workDirectory();
		let reads = 0;
		fake = await startFakeProvider({
			respond: (request) => {
				if (isSummary(request)) return summaryStep;
				const compacted = fake.requests.filter(isSummary).length > 0;
				const since = fake.requests.length - 1 - fake.requests.findIndex(isSummary);
				if (reads >= 20 || (compacted && since >= 2)) return { text: "all files read" };
				return read(++reads);
			},
		});
		const log = join(tempDir(), "llm.jsonl");
		const first = await runCli(["run", "--json", "read the files"], {
			env: cliEnv(home, fake, { DETAILED_LOG_PATH: log }),
			cwd: work,
		});
		expect(first.code).toBe(0);
		const compactions = jsonEvents(first.stdout).filter((event) => event.type === "compaction");
		expect(compactions).toHaveLength(1);
		expect(compactions[0]).toMatchObject({ trigger: "size", source: "summary" });
		const logged = jsonEvents(readFileSync(log, "utf8")).filter((record) => record.event === "compaction");
		expect(logged).toEqual([
			expect.objectContaining({ source: "summary", trigger: "size", round: compactions[0]?.round }),
		]);
		expect(logged[0]?.tokens_after).toBeLessThan(logged[0]?.tokens_before as number);

		const at = fake.requests.findIndex(isSummary);
		const summary = fake.requests[at] as RecordedRequest;
		const previous = fake.requests[at - 1] as RecordedRequest;
		// it replays the previous request's exact bytes: every token of it comes from the cache
		expect(summary.cachedTokens).toBe(previous.promptTokens);
		expect(summary.body.tools).toEqual(previous.body.tools);
		expect(messagesOf(summary).slice(0, -1)).toEqual(messagesOf(previous));
		expect(previous.promptTokens).toBeGreaterThan(0.8 * 8000);

		// the next request: system, the first prompt, the summary, then the newest exchanges verbatim
		const next = fake.requests[at + 1] as RecordedRequest;
		const messages = messagesOf(next);
		expect(messages[0]?.role).toBe("system");
		expect(textOf(messages[1])).toBe("read the files");
		expect(textOf(messages[2])).toMatch(
			/^<compaction-summary>\n.*\n\n## Task\nread the files\n[\s\S]*<\/compaction-summary>$/,
		);
		expect(messages[3]?.role).toBe("assistant");
		const newest = messages.at(-1) as WireMessage;
		expect(newest.role).toBe("tool");
		expect(textOf(newest)).toContain(`file ${reads - 1} line 39: alpha${(reads - 1) * 39} beta39`);
		// the kept messages are the previous request's newest ones, byte for byte, then the round that arrived since
		const kept = messages.slice(3, -2);
		expect(kept.length).toBeGreaterThanOrEqual(2);
		expect(messagesOf(previous).slice(-kept.length)).toEqual(kept);
		expect(JSON.stringify(messages)).not.toContain("file 1 line 0:");
		expect(next.promptTokens).toBeLessThan(0.85 * 8000);
		expect(next.promptTokens).toBeLessThan(previous.promptTokens);

		// resume: the first request of the next turn extends the last one byte for byte
		const id = (jsonEvents(first.stdout)[0] as { sessionId: string }).sessionId;
		const before = fake.requests.at(-1) as RecordedRequest;
		const second = await runCli(["run", "--session", id, "--json", "and now?"], { env: cliEnv(home, fake), cwd: work });
		expect(second.code).toBe(0);
		expect(jsonEvents(second.stdout).filter((event) => event.type === "compaction")).toHaveLength(0);
		const after = fake.requests[fake.requests.indexOf(before) + 1] as RecordedRequest;
		expect(after.cachedTokens).toBe(before.promptTokens);
		expect(textOf(messagesOf(after)[2])).toContain("<compaction-summary>");
	});

	it("triggered by a context-length error: compacts, then sends the same round again once", async () => {
		const home = homeWith();
		const work = workDirectory();
		const tooLong: ScriptStep = {
			status: 400,
			body: JSON.stringify({
				error: {
					message:
						"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
					type: "invalid_request_error",
					param: "messages",
					code: "context_length_exceeded",
				},
			}),
		};
		fake = await startFakeProvider({
			script: [read(1), read(2), read(3), tooLong, summaryStep, read(4), { text: "done" }],
		});
		const result = await runCli(["run", "--json", "read the files"], { env: cliEnv(home, fake), cwd: work });
		expect(result.code).toBe(0);
		const events = jsonEvents(result.stdout);
		expect(events.filter((event) => event.type === "compaction")).toEqual([
			expect.objectContaining({ trigger: "context_length", source: "summary", round: 4 }),
		]);
		expect(events.filter((event) => event.type === "error")).toHaveLength(0);
		const [, , answered, failed, summary, retry] = fake.requests as RecordedRequest[];
		expect(isSummary(summary as RecordedRequest)).toBe(true);
		// the summary replays the last request the provider answered (the failed one did not fit)
		expect(messagesOf(summary as RecordedRequest).slice(0, -1)).toEqual(messagesOf(answered as RecordedRequest));
		expect(summary?.cachedTokens).toBeGreaterThanOrEqual(answered?.promptTokens as number);
		expect(textOf(messagesOf(retry as RecordedRequest)[2])).toContain("<compaction-summary>");
		expect(retry?.promptTokens).toBeLessThan(failed?.promptTokens as number);
		expect(fake.requests).toHaveLength(7);
	});

	it("snowpea sessions compact ID: summarizes from the cache, stores the checkpoint, and the next turn starts from it", async () => {
		const home = homeWith();
		const work = workDirectory();
		fake = await startFakeProvider({ script: [read(1), read(2), read(3), read(4), { text: "read four" }] });
		const first = await runCli(["run", "--json", "read the files"], { env: cliEnv(home, fake), cwd: work });
		expect(first.code).toBe(0);
		const id = (jsonEvents(first.stdout)[0] as { sessionId: string }).sessionId;
		const last = fake.requests.at(-1) as RecordedRequest;

		fake.push(summaryStep);
		const compacted = await runCli(["sessions", "compact", id.slice(0, 8)], { env: cliEnv(home, fake), cwd: work });
		expect(compacted.code).toBe(0);
		const [, before, after] = /: (\d+) → (\d+) tokens \(summary\)/.exec(compacted.stdout) ?? [];
		expect(Number(after)).toBeLessThan(Number(before));
		const summary = fake.requests.at(-1) as RecordedRequest;
		expect(isSummary(summary)).toBe(true);
		// the rebuilt last request has the very bytes that were sent
		expect(summary.cachedTokens).toBe(last.promptTokens);
		expect(messagesOf(summary).slice(0, -1)).toEqual(messagesOf(last));

		fake.push({ text: "next answer" });
		const next = await runCli(["run", "--session", id, "what next?"], { env: cliEnv(home, fake), cwd: work });
		expect(next.code).toBe(0);
		const resumed = messagesOf(fake.requests.at(-1) as RecordedRequest);
		expect(textOf(resumed[1])).toBe("read the files");
		expect(textOf(resumed[2])).toContain(SUMMARY);
		expect(textOf(resumed.at(-1))).toBe("what next?");
		expect(JSON.stringify(resumed)).not.toContain("file 1 line 0:");
		expect(JSON.stringify(resumed)).toContain("file 4 line 0:");
	});
});
