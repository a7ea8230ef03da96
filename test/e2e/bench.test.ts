import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { BenchJson } from "../../src/bench/report.js";
import { jsonl, longSession } from "../support/bench-trajectories.js";
import { type CliResult, cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";

describe.skipIf(!cliBuilt)("snowpea bench, from the built CLI", () => {
	let home: string;
	let work: string;
	const bench = (args: string[]) => runCli(["bench", ...args], { env: cliEnv(home), cwd: work });

	let bundled: CliResult;
	beforeAll(async () => {
		home = tempDir("snowpea-home-");
		work = tempDir("snowpea-bench-");
		bundled = await bench(["--json"]);
	});

	it("replays the bundled corpus with no arguments and no API key", () => {
		expect(bundled.code).toBe(0);
		const document = JSON.parse(bundled.stdout) as BenchJson;
		expect(document.corpus.files).toBe(4);
		expect(document.corpus.rounds).toBe(409);
		expect(document.corpus.skipped).toEqual([]);
		expect(document.policies.map((policy) => policy.name)).toEqual([
			"off",
			"rounds",
			"budget",
			"ratio",
			"mask",
			"clear",
			"auto",
			"auto-saved",
			"oracle",
		]);
		const off = document.policies[0];
		expect(off?.recall).toBe(1);
		for (const row of off?.per_trajectory ?? []) expect(row.recall).toBe(1);
		const oracle = document.policies.at(-1);
		for (const policy of document.policies) {
			expect(policy.cost).toBeGreaterThan(0);
			expect(policy.per_trajectory).toHaveLength(4);
			// the oracle is the best schedule of result replacement; rounds and auto also elide long call arguments
			if (policy.name !== "auto" && policy.name !== "rounds")
				expect(policy.cost).toBeGreaterThanOrEqual((oracle?.cost ?? 0) * 0.95);
		}
		const auto = document.policies.find((policy) => policy.name === "auto");
		expect(auto?.cost).toBeLessThan(oracle?.cost ?? 0);
		// not a terminal: no progress bar, one summary line
		expect(bundled.stderr.trim().split("\n")).toHaveLength(1);
		expect(bundled.stderr).toMatch(/^bench: 4 trajectories, 409 requests, 9 policies in /);
	});

	it("prints the table for chosen policies and prices, and writes the chart page", async () => {
		const dir = tempDir("snowpea-bench-in-");
		writeFileSync(join(dir, "long.jsonl"), jsonl(longSession(12, 80)));
		writeFileSync(join(dir, "broken.jsonl"), `${jsonl(longSession(2))}{"role": "narrator", "content": "x"}\n`);
		const page = join(work, "bench.html");
		const result = await bench([dir, "--policy", "mask,budget", "--prices", "openai", "--html", page]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("1 trajectory, 13 requests, prices: openai");
		const rows = result.stdout.split("\n").filter((line) => /^(off|mask|budget|oracle|rounds) +\$/.test(line));
		expect(rows.map((line) => line.split(" ")[0])).toEqual(["off", "mask", "budget", "oracle"]);
		expect(result.stdout).toContain("actions are held fixed");
		expect(result.stderr).toContain('skipped broken.jsonl:8: unknown role "narrator"');
		expect(existsSync(page)).toBe(true);
		const html = readFileSync(page, "utf8");
		expect(html).toContain('id="bench-data"');
		expect(html).not.toMatch(/\s(src|href)=/);
	});

	it.each([
		[["--prices", "azure"], /--prices must be one of anthropic, openai, deepseek/],
		[["--policy", "rounds,fifo"], /--policy: unknown "fifo"/],
		[["--window", "-5"], /--window must be a whole number/],
		[["/no/such/dir"], /no such file or directory: \/no\/such\/dir/],
	])("refuses %j with one line and exit code 2", async (args, message) => {
		const result = await bench(args);
		expect(result.code).toBe(2);
		expect(result.stderr.trim().split("\n")).toHaveLength(1);
		expect(result.stderr).toMatch(message);
		expect(result.stdout).toBe("");
	});
});
