import { describe, expect, it } from "vitest";
import { longSession, trajectoryOf } from "../../test/support/bench-trajectories.js";
import { PRICE_SHEETS, type PriceSheet } from "../context/cost.js";
import { oracleReplay, replaySchedule } from "./oracle.js";
import { type PolicyRun, prepareReplay } from "./replay.js";

const costOf = (run: PolicyRun) => run.requests.reduce((sum, request) => sum + request.cost, 0);

/** Every subset of rounds 1..n. */
function* schedules(n: number): Generator<number[]> {
	for (let mask = 0; mask < 1 << n; mask++) {
		const cuts: number[] = [];
		for (let bit = 0; bit < n; bit++) if (mask & (1 << bit)) cuts.push(bit + 1);
		yield cuts;
	}
}

describe("oracle", () => {
	it.each<[string, PriceSheet, number[] | undefined]>([
		["anthropic, evenly spaced", PRICE_SHEETS.anthropic, undefined],
		["anthropic, with cold gaps past the TTL", PRICE_SHEETS.anthropic, [0, 20, 40, 400, 420, 440, 460, 900, 920, 940]],
		["openai (no write premium, 128-token steps)", PRICE_SHEETS.openai, undefined],
	])("is no dearer than any cut schedule, and as cheap as the best (%s)", (_, sheet, times) => {
		const trajectory = trajectoryOf(longSession(9, 40));
		if (times) trajectory.times = times;
		const context = prepareReplay(trajectory, { sheet });
		const oracle = oracleReplay(context, 2);
		const best = costOf(oracle);
		let cheapest = Number.POSITIVE_INFINITY;
		for (const cuts of schedules(trajectory.assistants.length)) {
			const cost = costOf(replaySchedule(context, cuts, 2));
			expect(best).toBeLessThanOrEqual(cost + 1e-12);
			cheapest = Math.min(cheapest, cost);
		}
		expect(best).toBeCloseTo(cheapest, 12);
		// its own schedule, re-priced, is what it reports
		expect(costOf(replaySchedule(context, oracle.cuts, 2))).toBeCloseTo(best, 12);
	});

	it("cuts at all only when a cut pays for its cache write, and never cuts into the last tool rounds", () => {
		const context = prepareReplay(trajectoryOf(longSession(12, 80)), { sheet: PRICE_SHEETS.anthropic });
		const oracle = oracleReplay(context, 2);
		const never = costOf(replaySchedule(context, [], 2));
		const always = costOf(
			replaySchedule(
				context,
				[...Array(13).keys()].map((index) => index + 1),
				2,
			),
		);
		expect(costOf(oracle)).toBeLessThan(never);
		expect(costOf(oracle)).toBeLessThan(always);
		expect(oracle.cuts.length).toBeGreaterThan(0);
		expect(oracle.cuts.length).toBeLessThan(11);
		// recall is measured on its requests like any policy's
		expect(oracle.requests.every((request) => request.kept <= request.counted)).toBe(true);
	});
});
