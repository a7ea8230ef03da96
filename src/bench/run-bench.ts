import type { PriceSheet } from "../context/cost.js";
import { type BenchPolicy, benchSettings, DEFAULT_BENCH_WINDOW } from "./bench-policies.js";
import { ORACLE_KEEP_TOOL_ROUNDS, oracleReplay } from "./oracle.js";
import { type PolicyRun, prepareReplay, replayPolicy } from "./replay.js";
import type { Trajectory } from "./trajectory.js";

export interface BenchOptions {
	sheet: PriceSheet;
	/** The online policies, in table order. */
	policies: readonly BenchPolicy[];
	/** Context window in tokens (ratio's trigger). */
	window?: number;
	/** Spacing of requests when a trajectory carries no times (default 20 s). */
	secondsPerRound?: number;
	/** Also compute the hindsight oracle (default true). */
	oracle?: boolean;
}

/** Every run of one policy, one per trajectory in corpus order. */
export interface PolicyRuns {
	name: string;
	runs: PolicyRun[];
}

export interface BenchResult {
	sheet: PriceSheet;
	window: number;
	trajectories: { file: string; rounds: number }[];
	/** The online policies in the order given, then "oracle" when computed. */
	policies: PolicyRuns[];
}

/** Reports progress after each trajectory: how many are done, of how many, and which one finished. */
export type BenchProgress = (done: number, total: number, file: string) => void;

/**
 * Replays every trajectory under every policy (and the oracle). The work of one trajectory (token counts, recall
 * index, tool tiers) is shared by its policies and dropped before the next trajectory. Pure apart from `progress`.
 */
export function runBench(
	trajectories: readonly Trajectory[],
	options: BenchOptions,
	progress?: BenchProgress,
): BenchResult {
	const window = options.window ?? DEFAULT_BENCH_WINDOW;
	const policies: PolicyRuns[] = options.policies.map((policy) => ({ name: policy.name, runs: [] }));
	const settings = options.policies.map((policy) => benchSettings(policy, window));
	const oracle: PolicyRuns | undefined = options.oracle === false ? undefined : { name: "oracle", runs: [] };
	for (const [index, trajectory] of trajectories.entries()) {
		const context = prepareReplay(trajectory, { sheet: options.sheet, secondsPerRound: options.secondsPerRound });
		for (const [position, policy] of options.policies.entries()) {
			policies[position]?.runs.push(
				replayPolicy(context, policy.name, settings[position] as (typeof settings)[number]),
			);
		}
		oracle?.runs.push(oracleReplay(context, ORACLE_KEEP_TOOL_ROUNDS));
		progress?.(index + 1, trajectories.length, trajectory.file);
	}
	return {
		sheet: options.sheet,
		window,
		trajectories: trajectories.map((trajectory) => ({ file: trajectory.file, rounds: trajectory.assistants.length })),
		policies: oracle ? [...policies, oracle] : policies,
	};
}
