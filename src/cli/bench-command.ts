import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
	BENCH_POLICIES,
	type BenchPolicy,
	DEFAULT_BENCH_WINDOW,
	ORACLE,
	selectPolicies,
} from "../bench/bench-policies.js";
import { benchHtml } from "../bench/html.js";
import { benchJson, formatReport, plural } from "../bench/report.js";
import { runBench } from "../bench/run-bench.js";
import { defaultCorpusDirectory, describeProblem, loadTrajectories } from "../bench/trajectory.js";
import { PRICE_SHEETS, type PriceSheetName } from "../context/cost.js";
import type { Output } from "./render.js";
import { EXIT } from "./run-command.js";
import { UsageError } from "./usage-error.js";

export interface BenchFlags {
	policy?: string;
	prices?: string;
	window?: string;
	json?: boolean;
	html?: string;
}

/** The options of one bench run, checked. */
interface BenchPlan {
	paths: string[];
	policies: BenchPolicy[];
	prices: PriceSheetName;
	window: number;
	json: boolean;
	html: string | undefined;
}

/** Checks the arguments; a bad value throws UsageError (one line, exit 2). */
function plan(paths: readonly string[], flags: BenchFlags): BenchPlan {
	const prices = flags.prices ?? "anthropic";
	if (!Object.hasOwn(PRICE_SHEETS, prices)) {
		throw new UsageError(`--prices must be one of ${Object.keys(PRICE_SHEETS).join(", ")}, got "${prices}"`);
	}
	const window = flags.window === undefined ? DEFAULT_BENCH_WINDOW : windowOf(flags.window);
	if (window === undefined) {
		throw new UsageError(`--window must be a whole number of tokens (e.g. 200000 or 200k), got "${flags.window}"`);
	}
	// "off" is the baseline every saving is measured against, so it is always replayed; "oracle" always is too.
	const names = (flags.policy ?? BENCH_POLICIES.map((policy) => policy.name).join(","))
		.split(",")
		.map((name) => name.trim())
		.filter((name) => name !== "" && name !== ORACLE);
	const selected = selectPolicies(["off", ...new Set(names.filter((name) => name !== "off"))]);
	if ("unknown" in selected) {
		const known = [...BENCH_POLICIES.map((policy) => policy.name), ORACLE].join(", ");
		throw new UsageError(
			`--policy: unknown ${selected.unknown.map((name) => `"${name}"`).join(", ")} (known: ${known})`,
		);
	}
	const chosen = paths.length > 0 ? [...paths] : [defaultCorpusDirectory()];
	for (const path of chosen) {
		if (!existsSync(path)) {
			throw new UsageError(
				paths.length > 0 ? `no such file or directory: ${path}` : `the bundled corpus is missing (${path})`,
			);
		}
	}
	if (flags.html !== undefined) {
		const directory = dirname(resolve(flags.html));
		if (!existsSync(directory) || !statSync(directory).isDirectory()) {
			throw new UsageError(`--html: no such directory: ${directory}`);
		}
	}
	return {
		paths: chosen,
		policies: selected.policies,
		prices: prices as PriceSheetName,
		window,
		json: flags.json === true,
		html: flags.html,
	};
}

function windowOf(text: string): number | undefined {
	const match = /^(\d+)(k?)$/i.exec(text.trim().replaceAll("_", ""));
	if (!match) return undefined;
	const value = Number(match[1]) * (match[2] ? 1000 : 1);
	return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** A one-line progress bar, redrawn in place. */
function progressBar(done: number, total: number, file: string): string {
	const width = 24;
	const filled = Math.round((done / Math.max(1, total)) * width);
	const name = file.length > 50 ? `…${file.slice(-49)}` : file;
	return `\r\u001b[2K[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${name}`;
}

/**
 * `snowpea bench [paths…]`: replays the trajectories under every policy, prints the table (or the JSON report) on
 * stdout and, with --html, writes the chart page. A progress bar goes to stderr only when it is a terminal; otherwise
 * one summary line. Skipped trajectories are listed on stderr. Returns the exit code: 0, 1 when nothing could be
 * replayed or the page could not be written; bad options throw UsageError (exit 2).
 */
export function benchCommand(
	paths: readonly string[],
	flags: BenchFlags,
	output: Output,
	interactive = process.stderr.isTTY === true,
): number {
	const options = plan(paths, flags);
	const started = performance.now();
	const { trajectories, problems } = loadTrajectories(options.paths);
	for (const problem of problems) output.log(`skipped ${describeProblem(problem)}\n`);
	if (trajectories.length === 0) {
		output.log("snowpea: no trajectories to replay\n");
		return EXIT.stopped;
	}
	const sheet = PRICE_SHEETS[options.prices];
	if (interactive) output.log(progressBar(0, trajectories.length, ""));
	const result = runBench(
		trajectories,
		{ sheet, policies: options.policies, window: options.window },
		interactive ? (done, total, file) => output.log(progressBar(done, total, file)) : undefined,
	);
	const document = benchJson(result, problems);
	const seconds = ((performance.now() - started) / 1000).toFixed(1);
	output.log(
		`${interactive ? "\r\u001b[2K" : ""}bench: ${plural(document.corpus.files, "trajectory", "trajectories")}, ${plural(document.corpus.rounds, "request", "requests")}, ${result.policies.length} policies in ${seconds} s\n`,
	);
	output.out(options.json ? `${JSON.stringify(document, null, 2)}\n` : formatReport(document));
	if (options.html !== undefined) {
		try {
			writeFileSync(options.html, benchHtml(result, document));
		} catch (error) {
			output.log(`snowpea: cannot write ${options.html}: ${error instanceof Error ? error.message : String(error)}\n`);
			return EXIT.stopped;
		}
		output.log(`wrote ${options.html}\n`);
	}
	return EXIT.done;
}
