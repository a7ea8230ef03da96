import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { stateOf, transcript } from "../../test/support/context-fixtures.js";
import { batchThreshold, planAuto, predictFutureRequests } from "./auto.js";
import { PRICE_SHEETS, rewriteBenefit, warmProbability } from "./cost.js";
import { runPolicy } from "./engine.js";
import type { Decision, Entry, PassDecision, ReplaceDecision } from "./ledger.js";
import { savedSoFar } from "./savings.js";
import { estimateTokens } from "./tokens.js";

const sheet = PRICE_SHEETS.anthropic;
const warm = { sheet, idleSeconds: 10 };
/** `rounds` rounds of one `size`-byte result each (distinct text per round). */
const session = (rounds: number, size: number): Entry[] =>
	transcript(
		Array.from({ length: rounds }, (_, index) => [`${String(index % 10).repeat(99)}\n`.repeat(Math.ceil(size / 100))]),
	);

/** Runs auto round by round over a growing session, returning the rounds at which it rewrote. */
function schedule(entries: Entry[], economy = warm, window = 0): number[] {
	const ledger: Decision[] = [];
	const rewrites: number[] = [];
	const rounds = entries.reduce((round, entry) => Math.max(round, entry.round), 0);
	for (let round = 2; round <= rounds + 1; round++) {
		const visible = entries.filter((entry) => entry.round < round || entry.message.role === "user");
		const state = { ...stateOf(visible, { policy: "auto", contextWindow: window }, { ledger, round }), economy };
		const { decisions } = runPolicy(state);
		if (decisions.length > 0) rewrites.push(round);
		ledger.push(...decisions);
	}
	return rewrites;
}

describe("auto: every rewrite priced against its cache write", () => {
	it("prices with the documented algebra", () => {
		// Net = R·r·ΔT + w·ΔT − p·(w − r)·S
		const net = rewriteBenefit(
			{ removedTokens: 1000, suffixTokens: 20_000, futureRequests: 10, warmProbability: 1 },
			sheet,
		);
		expect(net).toBeCloseTo(10 * 0.1 * 1000 + 1.25 * 1000 - 1.15 * 20_000, 6);
		expect(warmProbability(100, sheet)).toBe(1);
		expect(warmProbability(301, sheet)).toBe(0);
		expect(predictFutureRequests(41)).toBe(20);
		expect(batchThreshold(10_000, 1_000, 1, sheet)).toBeCloseTo(Math.sqrt((2 * 1.15 * 10_000 * 1_000) / 0.1), 6);
	});

	it("does not rewrite while the cache is warm and the saving is small", () => {
		// 10 rounds of 2 KB results: a few stale results, far below the economic batch
		expect(schedule(session(10, 2_000))).toEqual([]);
	});

	it("rewrites in a few large batches on a long session, not every round", () => {
		const rewrites = schedule(session(80, 8_000));
		expect(rewrites.length).toBeGreaterThan(0);
		expect(rewrites.length).toBeLessThan(80 / 4);
		for (let index = 1; index < rewrites.length; index++) {
			expect((rewrites[index] as number) - (rewrites[index - 1] as number)).toBeGreaterThanOrEqual(3);
		}
	});

	it("takes everything worth removing when the cache has gone cold: the write is paid anyway", () => {
		const entries = session(12, 4_000);
		const stale = planAuto({ ...stateOf(entries, { policy: "auto" }), economy: warm }, warm);
		const cold = planAuto(
			{ ...stateOf(entries, { policy: "auto" }), economy: { sheet, idleSeconds: 3_600 } },
			{
				sheet,
				idleSeconds: 3_600,
			},
		);
		expect(stale.decisions).toEqual([]);
		// every result older than the newest autoKeepToolRounds (5) tool rounds: rounds 1–7 of 12
		expect(cold.decisions.length).toBe(12 - 5);
		expect(cold.reason.warmProbability).toBe(0);
	});

	it("rewrites before the compaction threshold is reached, whatever the price", () => {
		const entries = session(12, 4_000);
		const window = 20_000;
		const near = stateOf(
			entries,
			{ policy: "auto", contextWindow: window, compactRatio: 0.85 },
			{ promptTokens: 16_000 },
		);
		const plan = planAuto({ ...near, economy: warm }, warm);
		expect(plan.reason.forced).toBe(true);
		expect(plan.decisions.length).toBeGreaterThan(0);
	});

	it("never expects more requests than a session with a known end can make (a child's budget)", () => {
		const entries = session(40, 8_000);
		const state = stateOf(entries, { policy: "auto" }, { round: 41 });
		expect(planAuto(state, warm).decisions.length).toBeGreaterThan(0);
		const ending = planAuto(state, { ...warm, futureRequestsAtMost: 0 });
		// with no request left to read the saving, only a rewrite that pays in this very request would do
		expect(ending.decisions).toEqual([]);
		expect(ending.reason.futureRequests).toBe(0);
		expect(planAuto(state, { ...warm, futureRequestsAtMost: 3 }).reason.futureRequests).toBe(3);
		expect(planAuto(state, { ...warm, futureRequestsAtMost: 500 }).reason.futureRequests).toBe(20);
	});

	it("replaces with the same placeholders and spill files as rounds, and logs why", () => {
		const entries = session(40, 8_000);
		const state = { ...stateOf(entries, { policy: "auto", spillDir: "/spill" }, { round: 41 }), economy: warm };
		const { decisions, report } = runPolicy(state);
		expect(decisions.length).toBeGreaterThan(0);
		expect((decisions[0] as ReplaceDecision | undefined)?.placeholder).toMatch(
			/^\[earlier read_file output pruned — \d+ chars saved to \/spill\/\d{4}\.txt; read_file to recover\]$/,
		);
		expect(report?.auto).toMatchObject({ futureRequests: 20, warmProbability: 1, forced: false });
		expect(report?.auto?.benefit).toBeGreaterThan(0);
		expect(report?.auto?.removedTokens).toBeGreaterThanOrEqual(report?.auto?.batchTokens ?? Number.POSITIVE_INFINITY);
	});

	const corpus = resolve(import.meta.dirname, "../../../shared/corpus");
	it.skipIf(!existsSync(corpus))(
		"on the shared corpus of 60 real runs: cheaper than every other policy and the hindsight oracle, recall ≥ 0.91",
		async () => {
			const { loadTrajectories } = await import("../bench/trajectory.js");
			const { runBench } = await import("../bench/run-bench.js");
			const { BENCH_POLICIES } = await import("../bench/bench-policies.js");
			const { trajectories } = loadTrajectories([corpus]);
			expect(trajectories.length).toBe(60);
			const result = runBench(trajectories, { sheet, policies: BENCH_POLICIES });
			const total = (name: string) =>
				(result.policies.find((policy) => policy.name === name)?.runs ?? []).reduce(
					(sum, run) => sum + run.requests.reduce((cost, request) => cost + request.cost, 0),
					0,
				);
			const auto = total("auto");
			for (const other of ["off", "rounds", "budget", "ratio", "mask", "clear"]) {
				expect(auto, `auto vs ${other}`).toBeLessThan(total(other));
			}
			// at or below the cheapest hindsight schedule of its kind, while keeping recall above 0.91
			expect(auto).toBeLessThanOrEqual(total("oracle"));
			const runs = result.policies.find((policy) => policy.name === "auto")?.runs ?? [];
			const requests = runs.flatMap((run) => run.requests);
			const recall =
				requests.reduce((sum, request) => sum + request.kept, 0) /
				requests.reduce((sum, request) => sum + request.counted, 0);
			expect(recall).toBeGreaterThanOrEqual(0.91);
			// spending only what earlier rewrites saved, no run ends dearer than off
			const saved = result.policies.find((policy) => policy.name === "auto-saved")?.runs ?? [];
			const off = result.policies.find((policy) => policy.name === "off")?.runs ?? [];
			const costOf = (run: (typeof off)[number]) => run.requests.reduce((sum, request) => sum + request.cost, 0);
			expect(saved).toHaveLength(60);
			saved.forEach((run, index) => {
				expect(costOf(run), run.file).toBeLessThanOrEqual(costOf(off[index] as (typeof off)[number]) + 1e-9);
			});
			expect(total("auto-saved")).toBeLessThan(total("off"));
		},
		60_000,
	);

	it('"saved" spends no more up front than earlier rewrites have saved: the first rewrite waits', () => {
		const entries = session(40, 8_000);
		const state = stateOf(entries, { policy: "auto" }, { round: 41 });
		expect(planAuto(state, warm).decisions.length).toBeGreaterThan(0);
		const saved = stateOf(entries, { policy: "auto", autoSpend: "saved" }, { round: 41 });
		expect(planAuto(saved, warm).decisions).toEqual([]);
		// a cold cache makes the rewrite free, so it goes even with nothing saved yet
		expect(planAuto(saved, { sheet, idleSeconds: 3_600 }).decisions.length).toBeGreaterThan(0);
	});

	it("savedSoFar: a rewrite's reads saved, minus what its write cost up front, from the ledger alone", () => {
		const entries = session(40, 8_000);
		const state = stateOf(entries, { policy: "auto" }, { round: 41 });
		const { decisions } = planAuto(state, { sheet, idleSeconds: 3_600 });
		const ledger = decisions.map((decision) => ({ ...decision, round: 41 }));
		const tokens = (entry: Entry, decision: PassDecision | undefined) =>
			decision?.kind === "replace"
				? estimateTokens(decision.placeholder)
				: estimateTokens(entry.message.role === "tool" ? entry.message.content : "");
		// right after the rewrite it has only cost; every later request reads the removed tokens for a tenth
		const at42 = savedSoFar(entries, ledger, 42, sheet, tokens);
		const at52 = savedSoFar(entries, ledger, 52, sheet, tokens);
		expect(at42).toBeLessThan(0);
		const removed = decisions.reduce(
			(sum, decision) =>
				sum + tokens(entries[decision.entry] as Entry, undefined) - tokens(entries[decision.entry] as Entry, decision),
			0,
		);
		expect(at52 - at42).toBeCloseTo(10 * 0.1 * removed, 6);
		// decisions not yet in force, and checkpoints, count for nothing
		expect(savedSoFar(entries, ledger, 41, sheet, tokens)).toBe(0);
	});
});
