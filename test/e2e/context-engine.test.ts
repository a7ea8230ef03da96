import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
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
const toolTexts = (request: RecordedRequest) =>
	(request.body.messages as WireMessage[])
		.filter((message) => message.role === "tool")
		.map((message) => String(message.content));
const cacheBreaks = (fake: FakeProvider) =>
	fake.requests
		.slice(1)
		.filter((request, index) => request.cachedTokens < (fake.requests[index] as RecordedRequest).promptTokens).length;
/** A shell command printing about 6 KB of numbered lines, different each round. */
const sixKilobytes = (round: number) => `seq ${round * 100000} ${round * 100000 + 999}`;
const shell = (round: number): ScriptStep => ({
	toolCalls: [{ name: "shell", arguments: JSON.stringify({ command: sixKilobytes(round) }) }],
});

describe.skipIf(!cliBuilt)("the context engine, end to end", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	/** Continues the session a `--json` run printed with one more prompt; returns the request that prompt sent. */
	async function continueSession(stdout: string, home: string, work: string): Promise<RecordedRequest> {
		const id = (JSON.parse(stdout.split("\n")[0] as string) as { sessionId: string }).sessionId;
		const second = await runCli(["run", "--mode", "auto", "--session", id, "and now?"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		expect(second.code).toBe(0);
		return fake.requests.at(-1) as RecordedRequest;
	}

	/** Runs 14 rounds of 6 KB shell output under one configuration, then the model reads back a spilled result. */
	async function fourteenRounds(env: Record<string, string>, settings?: object) {
		const home = tempDir("snowpea-home-");
		if (settings) {
			const { writeFileSync } = await import("node:fs");
			writeFileSync(join(home, "settings.json"), JSON.stringify(settings));
		}
		let recovered: string | undefined;
		fake = await startFakeProvider({
			respond: (request, index) => {
				if (index < 13) return shell(index + 1);
				if (index === 13) {
					const spilled = toolTexts(request)
						.map((text) => /saved to (\S+?\.txt)/.exec(text)?.[1])
						.find(Boolean);
					recovered = spilled;
					return spilled
						? { toolCalls: [{ name: "read_file", arguments: JSON.stringify({ path: spilled }) }] }
						: { text: "nothing spilled" };
				}
				return { text: "done" };
			},
		});
		const result = await runCli(["run", "--mode", "auto", "--json", "produce output"], {
			env: cliEnv(home, fake, env),
			cwd: tempDir(),
		});
		const sessionId = (JSON.parse(result.stdout.split("\n")[0] as string) as { sessionId: string }).sessionId;
		return { result, recovered, home, sessionId };
	}

	it("rounds (seed 000's agent.keepToolRounds): old results become pruned placeholders that point at 0600 spill files the model can read back", async () => {
		const { result, recovered } = await fourteenRounds({}, { agent: { keepToolRounds: 6 } });
		expect(result.code).toBe(0);
		const last = fake.requests[13] as RecordedRequest;
		const texts = toolTexts(last);
		expect(texts[0]).toMatch(
			/^\[earlier shell output pruned — \d+ chars saved to \S+\/elided\/0000\.txt; read_file to recover\]$/,
		);
		expect(texts.slice(-6).every((text) => text.includes("[exit 0]"))).toBe(true);
		expect(recovered).toBeDefined();
		const file = recovered as string;
		expect(readFileSync(file, "utf8")).toMatch(/^100000\n100001\n[\s\S]*100999\n+\[exit 0\]$/);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
		const readBack = toolTexts(fake.requests[14] as RecordedRequest).at(-1) as string;
		expect(readBack).toContain("100999");
		expect(readBack).toContain("[exit 0]");
	});

	it("budget (seed 003's variables only) elides in batches and breaks the prefix cache far less often than rounds", async () => {
		const rounds = await fourteenRounds({}, { agent: { keepToolRounds: 6 } });
		const roundsBreaks = cacheBreaks(fake);
		await fake.close();
		const budget = await fourteenRounds({
			CONTEXT_HISTORY_BUDGET_BYTES: "40000",
			CONTEXT_HISTORY_BUDGET_LOW_BYTES: "8000",
			CONTEXT_KEEP_RECENT_RESULTS: "1",
		});
		const budgetBreaks = cacheBreaks(fake);
		const show = await runCli(["sessions", "show", budget.sessionId], { env: cliEnv(budget.home), cwd: tempDir() });
		expect(show.stdout).toMatch(/cache: .*\d+ hit/);
		expect(show.stdout).toMatch(/round \d+: prefix change \(\d+% reused\) — elision: elide ×\d+/);
		expect(rounds.result.code).toBe(0);
		expect(budget.result.code).toBe(0);
		const texts = toolTexts(fake.requests[13] as RecordedRequest);
		expect(texts[0]).toMatch(
			/^\[earlier shell result elided — \d+ bytes saved to \S+\/elided\/0000\.txt; read_file to recover\.\]$/,
		);
		expect(roundsBreaks).toBeGreaterThanOrEqual(6);
		expect(budgetBreaks).toBeLessThanOrEqual(3);
		expect(budgetBreaks * 2).toBeLessThan(roundsBreaks);
	});

	it("off sends every byte and never breaks the cache", async () => {
		const { result } = await fourteenRounds({}, { agent: { pruneToolOutputs: false } });
		expect(result.code).toBe(0);
		expect(cacheBreaks(fake)).toBe(0);
		expect(toolTexts(fake.requests[13] as RecordedRequest).every((text) => text.includes("[exit 0]"))).toBe(true);
	});

	it("E7: a 10 KB budget elides exactly the previous round's 6 KB read after rounds 2–4, logged as elision events", async () => {
		const work = tempDir();
		const { writeFileSync } = await import("node:fs");
		for (let index = 1; index <= 4; index++)
			writeFileSync(join(work, `f${index}.txt`), `${String(index).repeat(99)}\n`.repeat(60));
		const log = join(tempDir(), "llm.jsonl");
		fake = await startFakeProvider({
			script: [
				...[1, 2, 3, 4].map((index) => ({
					toolCalls: [{ name: "read_file", arguments: JSON.stringify({ path: `f${index}.txt` }) }],
				})),
				{ text: "read them all" },
			],
		});
		const env = {
			CONTEXT_HISTORY_BUDGET_BYTES: "10000",
			CONTEXT_HISTORY_BUDGET_LOW_BYTES: "4000",
			CONTEXT_KEEP_RECENT_RESULTS: "1",
			DETAILED_LOG_PATH: log,
		};
		const result = await runCli(["run", "read four files"], { env: cliEnv(tempDir(), fake, env), cwd: work });
		expect(result.code).toBe(0);
		const records = readFileSync(log, "utf8")
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as Record<string, number | string>);
		const elisions = records.filter((record) => record.event === "elision");
		expect(elisions.map((record) => [record.round, record.count])).toEqual([
			[3, 1],
			[4, 1],
			[5, 1],
		]);
		for (const record of elisions) expect(record.reclaimed_bytes).toBeGreaterThan(5000);
		// each rewrite elides the result that was newest before it, never the one that just arrived
		for (const index of [2, 3, 4]) {
			const texts = toolTexts(fake.requests[index] as RecordedRequest);
			expect(texts.at(-2)).toMatch(/^\[earlier read_file result elided/);
			expect(texts.at(-1)).toContain(String(index).repeat(99));
		}
		const responses = records.filter((record) => record.event === "response");
		expect(responses).toHaveLength(5);
		// every response is attributed: the first is a cold start, each elision names itself as the prefix change
		expect(responses.map((record) => record.cache)).toEqual([
			"cold_start",
			"hit",
			"prefix_change",
			"prefix_change",
			"prefix_change",
		]);
		expect(responses[2]?.cache_because).toEqual(["elision: elide ×1"]);
		const seqs = records.map((record) => record.seq as number);
		expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
	});

	it("ratio: past the snip share of the window, stale results are cut to head and tail with an archive path", async () => {
		const { result } = await fourteenRounds({}, { context: { policy: "ratio", contextWindow: 40000 } });
		expect(result.code).toBe(0);
		const texts = toolTexts(fake.requests[13] as RecordedRequest);
		const snipped = texts.filter((text) => text.includes("[snipped tool result — shell ("));
		expect(snipped.length).toBeGreaterThan(0);
		expect(snipped[0]).toMatch(
			/^\[snipped tool result — shell \(\d+ bytes\) archive=\S+\/elided\/0000\.txt head=40 tail=\d+\]\n100000\n/,
		);
		expect(snipped[0]).toContain("100039\n");
		expect(snipped[0]).not.toContain("100500");
		expect(snipped[0]).toContain("[exit 0]");
	});

	it("a resumed session rebuilds the very same bytes from its stored ledger", async () => {
		const home = tempDir("snowpea-home-");
		writeFileSync(join(home, "settings.json"), JSON.stringify({ agent: { keepToolRounds: 6 } }));
		const work = tempDir();
		fake = await startFakeProvider({
			respond: (_request, index) => (index < 9 ? shell(index + 1) : { text: `answer ${index}` }),
		});
		const first = await runCli(["run", "--mode", "auto", "--json", "produce output"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		expect(first.code).toBe(0);
		const before = fake.requests.at(-1) as RecordedRequest;
		expect(toolTexts(before)[0]).toMatch(/^\[earlier shell output pruned/);
		const after = await continueSession(first.stdout, home, work);
		expect(after.cachedTokens).toBe(before.promptTokens);
		expect(toolTexts(after)).toEqual(toolTexts(before));
	});

	it("a written file's content leaves the request with its pruned result, spilled, and a resumed session keeps the bytes", async () => {
		const home = tempDir("snowpea-home-");
		writeFileSync(join(home, "settings.json"), JSON.stringify({ agent: { keepToolRounds: 2 } }));
		const work = tempDir();
		const content = (round: number) => `line ${round}\n`.repeat(300);
		fake = await startFakeProvider({
			respond: (_request, index) =>
				index < 5
					? {
							toolCalls: [
								{ name: "write_file", arguments: JSON.stringify({ path: `f${index}.txt`, content: content(index) }) },
							],
						}
					: { text: `answer ${index}` },
		});
		const first = await runCli(["run", "--mode", "auto", "--json", "write five files"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		expect(first.code).toBe(0);
		// the tool ran with the full text
		expect(readFileSync(join(work, "f0.txt"), "utf8")).toBe(content(0));
		const before = fake.requests.at(-1) as RecordedRequest;
		const calls = (before.body.messages as { role: string; tool_calls?: { function: { arguments: string } }[] }[])
			.filter((message) => message.role === "assistant" && message.tool_calls)
			.map((message) => JSON.parse(message.tool_calls?.[0]?.function.arguments ?? "{}") as Record<string, string>);
		expect(calls.map((call) => call.path)).toEqual(["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"]);
		// rounds 1–3 are pruned: their content is a note naming a 0600 spill file that holds the original
		const note =
			/^\[snowpea elided this 301-line value \(2100 chars\) of an earlier call; the call ran with the full text; saved to (\S+\.txt)\]$/;
		const spill = note.exec(calls[0]?.content ?? "")?.[1] as string;
		expect(spill).toBeDefined();
		expect(readFileSync(spill, "utf8")).toMatch(/^--- write_file \(\S+\) content ---\nline 0\n/);
		expect(readFileSync(spill, "utf8")).toContain(content(0));
		expect(statSync(spill).mode & 0o777).toBe(0o600);
		expect(calls.slice(0, 3).every((call) => note.test(call.content ?? ""))).toBe(true);
		expect(calls.slice(3).map((call) => call.content)).toEqual([content(3), content(4)]);

		const after = await continueSession(first.stdout, home, work);
		expect(after.cachedTokens).toBe(before.promptTokens);
		expect(JSON.stringify(after.body.messages).startsWith(JSON.stringify(before.body.messages).slice(0, -1))).toBe(
			true,
		);
	});
});
