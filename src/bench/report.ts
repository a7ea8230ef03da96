import type { PriceSheet } from "../context/cost.js";
import { ORACLE } from "./bench-policies.js";
import { ORACLE_KEEP_TOOL_ROUNDS } from "./oracle.js";
import type { PolicyRun } from "./replay.js";
import { REREAD_CALL_TOKENS, REREAD_CARRY } from "./rereads.js";
import type { BenchResult } from "./run-bench.js";
import { describeProblem, type TrajectoryProblem } from "./trajectory.js";

/**
 * The output of `snowpea bench --json`, exactly. Costs in USD, tokens are estimated prompt tokens (o200k).
 * - cost: billed prompt cost (cache reads, cache writes, uncached input) plus output; output is the same under every
 *   policy (the recorded assistant messages).
 * - input_tokens = cache_read_tokens + cache_write_tokens + uncached_input_tokens, summed over every request.
 * - recall: micro-average over every counted token of every request (1 when none was counted).
 * - rewrites: requests that changed something the previous request had sent.
 * - policies: the online policies in the order asked, then "oracle" (the hindsight-cheapest cut schedule).
 */
export interface BenchJson {
	prices: PriceSheet;
	corpus: {
		/** Trajectories replayed. */
		files: number;
		/** Requests replayed (one per recorded assistant message). */
		rounds: number;
		/** Trajectories left out, one line each: `file:line: reason`. */
		skipped: string[];
	};
	policies: BenchPolicyJson[];
}

export interface BenchPolicyJson {
	name: string;
	cost: number;
	input_tokens: number;
	cache_read_tokens: number;
	cache_write_tokens: number;
	uncached_input_tokens: number;
	output_tokens: number;
	recall: number;
	rewrites: number;
	/** Estimated USD of reading again what the requests no longer showed (src/bench/rereads.ts); not in `cost`. */
	reread_cost: number;
	per_trajectory: BenchTrajectoryJson[];
}

export interface BenchTrajectoryJson {
	file: string;
	rounds: number;
	cost: number;
	recall: number;
}

interface Totals {
	cost: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	uncached: number;
	output: number;
	kept: number;
	counted: number;
	rewrites: number;
	reread: number;
}

function totalsOf(runs: readonly PolicyRun[]): Totals {
	const totals: Totals = {
		cost: 0,
		input: 0,
		cacheRead: 0,
		cacheWrite: 0,
		uncached: 0,
		output: 0,
		kept: 0,
		counted: 0,
		rewrites: 0,
		reread: 0,
	};
	for (const run of runs) {
		for (const request of run.requests) {
			totals.cost += request.cost;
			totals.input += request.tokens;
			totals.cacheRead += request.cacheRead;
			totals.cacheWrite += request.cacheWrite;
			totals.uncached += request.uncached;
			totals.output += request.output;
			totals.kept += request.kept;
			totals.counted += request.counted;
			totals.reread += request.reread;
			if (request.rewrite) totals.rewrites++;
		}
	}
	return totals;
}

const share = (kept: number, counted: number) => (counted === 0 ? 1 : kept / counted);

/** The `--json` document of a bench result; `problems` are the skipped trajectories. Pure. */
export function benchJson(result: BenchResult, problems: readonly TrajectoryProblem[]): BenchJson {
	return {
		prices: result.sheet,
		corpus: {
			files: result.trajectories.length,
			rounds: result.trajectories.reduce((sum, trajectory) => sum + trajectory.rounds, 0),
			skipped: problems.map(describeProblem),
		},
		policies: result.policies.map((policy) => {
			const totals = totalsOf(policy.runs);
			return {
				name: policy.name,
				cost: totals.cost,
				input_tokens: totals.input,
				cache_read_tokens: totals.cacheRead,
				cache_write_tokens: totals.cacheWrite,
				uncached_input_tokens: totals.uncached,
				output_tokens: totals.output,
				recall: share(totals.kept, totals.counted),
				rewrites: totals.rewrites,
				reread_cost: totals.reread,
				per_trajectory: policy.runs.map((run) => {
					const one = totalsOf([run]);
					return { file: run.file, rounds: run.requests.length, cost: one.cost, recall: share(one.kept, one.counted) };
				}),
			};
		}),
	};
}

/** One table row: what the terminal shows for a policy. */
export interface TableRow {
	name: string;
	cost: number;
	/** Saving versus "off" as a share of off's cost (negative: dearer); undefined without "off". */
	savingVsOff: number | undefined;
	/** Prompt cost (output left out: it is the same under every policy) over off's; undefined without "off". */
	promptVsOff: number | undefined;
	/** Trajectories this policy replays dearer than "off"; undefined without "off". */
	dearerThanOff: number | undefined;
	/** Saving versus "off" once the estimated re-reads are paid too; undefined without "off". */
	savingWithRereads: number | undefined;
	/** Cache reads as a share of input tokens. */
	cacheHitShare: number;
	/** Cache-write spend as a share of the policy's cost. */
	cacheWriteShare: number;
	recall: number;
	rewrites: number;
	/** Cost ÷ the oracle's cost; undefined without an oracle. */
	versusOracle: number | undefined;
}

/** The rows of the terminal table, in the document's policy order. Pure. */
export function tableRows(document: BenchJson): TableRow[] {
	const off = document.policies.find((policy) => policy.name === "off");
	const oracle = document.policies.find((policy) => policy.name === ORACLE);
	const writePrice = (document.prices.input * document.prices.cacheWriteMultiplier) / 1e6;
	const prompt = (policy: BenchPolicyJson) => policy.cost - (policy.output_tokens * document.prices.output) / 1e6;
	return document.policies.map((policy) => ({
		name: policy.name,
		cost: policy.cost,
		savingVsOff: off && off.cost > 0 ? 1 - policy.cost / off.cost : undefined,
		promptVsOff: off && prompt(off) > 0 ? prompt(policy) / prompt(off) : undefined,
		savingWithRereads:
			off && off.cost > 0 ? 1 - (policy.cost + policy.reread_cost) / (off.cost + off.reread_cost) : undefined,
		dearerThanOff: off
			? policy.per_trajectory.filter(
					(run, index) => run.cost > (off.per_trajectory[index]?.cost ?? Infinity) * (1 + 1e-9),
				).length
			: undefined,
		cacheHitShare: policy.input_tokens === 0 ? 0 : policy.cache_read_tokens / policy.input_tokens,
		cacheWriteShare: policy.cost === 0 ? 0 : (policy.cache_write_tokens * writePrice) / policy.cost,
		recall: policy.recall,
		rewrites: policy.rewrites,
		versusOracle: oracle && oracle.cost > 0 ? policy.cost / oracle.cost : undefined,
	}));
}

/** `1 trajectory`, `3,882 requests`. */
export const plural = (count: number, one: string, many: string) =>
	`${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
/** A saving as the change in cost: 0.28 → "−28.0%", −0.1 → "+10.0%". */
const signedPercent = (saving: number) => `${saving >= 0 ? "−" : "+"}${percent(Math.abs(saving))}`;
const dollars = (value: number) => `$${value.toFixed(value >= 10 ? 2 : value >= 1 ? 3 : 4)}`;

/** The footer every report carries: what the figures mean and what they cannot show. */
export function reportFooter(document: BenchJson): string[] {
	const output = document.policies[0]?.output_tokens ?? 0;
	const outputCost = (output * document.prices.output) / 1e6;
	return [
		`cost = billed prompt (cache reads + cache writes + uncached input) + output; output is identical under every policy (${output.toLocaleString("en-US")} tokens, ${dollars(outputCost)}); prompt ÷ off leaves it out. runs > off = trajectories the policy replays dearer than off.`,
		`+ re-reads = vs off once an estimate of reading again what a request no longer showed is paid: per missing token, the result that held it is read once more (a ${REREAD_CALL_TOKENS}-token call, its tokens written to the cache and read for the next ${REREAD_CARRY} requests).`,
		"The agent's actions are held fixed: re-reads a policy would have caused are estimated (+ re-reads), not replayed, and a change in task success is not measured. Recall (the share of tool-derived identifiers, paths and numbers the agent used that were still in its request) is the proxy.",
		`oracle = the cheapest schedule, chosen with hindsight, of "replace every result older than the last ${ORACLE_KEEP_TOOL_ROUNDS} tool rounds" (bare placeholders, results only: rounds and auto also elide long call arguments); ÷ oracle is cost over its cost.`,
		"Tokens are o200k estimates; every request starts with a fixed ~2.1K-token block of tool schemas the recorded runs do not carry.",
	];
}

/** The heading and one row per policy, aligned. Pure. */
export function formatTable(document: BenchJson): string {
	const header = [
		"policy",
		"cost",
		"vs off",
		"prompt ÷ off",
		"runs > off",
		"+ re-reads",
		"cache hit",
		"write share",
		"recall",
		"rewrites",
		"÷ oracle",
	];
	const rows = tableRows(document).map((row) => [
		row.name,
		dollars(row.cost),
		row.name === "off" || row.savingVsOff === undefined ? "—" : signedPercent(row.savingVsOff),
		row.name === "off" || row.promptVsOff === undefined ? "—" : row.promptVsOff.toFixed(3),
		row.name === "off" || row.dearerThanOff === undefined ? "—" : String(row.dearerThanOff),
		row.name === "off" || row.savingWithRereads === undefined ? "—" : signedPercent(row.savingWithRereads),
		percent(row.cacheHitShare),
		percent(row.cacheWriteShare),
		row.recall.toFixed(3),
		String(row.rewrites),
		row.versusOracle === undefined ? "—" : `${row.versusOracle.toFixed(2)}×`,
	]);
	const widths = header.map((title, column) =>
		Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
	);
	const line = (cells: string[]) =>
		cells
			.map((cell, column) => (column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0)))
			.join("  ");
	const { files, rounds } = document.corpus;
	return [
		`snowpea bench — ${plural(files, "trajectory", "trajectories")}, ${plural(rounds, "request", "requests")}, prices: ${document.prices.name}`,
		"",
		line(header),
		...rows.map(line),
	].join("\n");
}

/** The terminal report: the table and the footer (skipped trajectories are the caller's to show). Pure. */
export function formatReport(document: BenchJson): string {
	return [formatTable(document), "", ...reportFooter(document), ""].join("\n");
}
