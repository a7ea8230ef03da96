import { describe, expect, it } from "vitest";
import { longSession, trajectoryOf } from "../../test/support/bench-trajectories.js";
import { PRICE_SHEETS } from "../context/cost.js";
import { BENCH_POLICIES } from "./bench-policies.js";
import { benchHtml } from "./html.js";
import { type BenchJson, benchJson, formatReport, tableRows } from "./report.js";
import { runBench } from "./run-bench.js";

function sample(): { document: BenchJson; html: string } {
	const trajectories = [trajectoryOf(longSession(14, 80), "a.jsonl"), trajectoryOf(longSession(5), "b/c.jsonl")];
	const result = runBench(trajectories, { sheet: PRICE_SHEETS.anthropic, policies: BENCH_POLICIES });
	const document = benchJson(result, [{ file: "bad.jsonl", line: 3, message: "not valid JSON" }]);
	return { document, html: benchHtml(result, document) };
}

const keys = (value: object) => Object.keys(value).sort();

describe("the --json report", () => {
	const { document, html } = sample();

	it("has exactly the documented fields", () => {
		expect(keys(document)).toEqual(["corpus", "policies", "prices"]);
		expect(document.prices).toEqual(PRICE_SHEETS.anthropic);
		expect(document.corpus).toEqual({ files: 2, rounds: 21, skipped: ["bad.jsonl:3: not valid JSON"] });
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
		for (const policy of document.policies) {
			expect(keys(policy)).toEqual([
				"cache_read_tokens",
				"cache_write_tokens",
				"cost",
				"input_tokens",
				"name",
				"output_tokens",
				"per_trajectory",
				"recall",
				"reread_cost",
				"rewrites",
				"uncached_input_tokens",
			]);
			// nothing hidden, nothing to read again
			if (policy.recall === 1) expect(policy.reread_cost).toBe(0);
			else expect(policy.reread_cost).toBeGreaterThan(0);
			expect(policy.input_tokens).toBe(
				policy.cache_read_tokens + policy.cache_write_tokens + policy.uncached_input_tokens,
			);
			expect(policy.per_trajectory.map((row) => [row.file, row.rounds])).toEqual([
				["a.jsonl", 15],
				["b/c.jsonl", 6],
			]);
			for (const row of policy.per_trajectory) expect(keys(row)).toEqual(["cost", "file", "recall", "rounds"]);
			const sum = policy.per_trajectory.reduce((total, row) => total + row.cost, 0);
			expect(policy.cost).toBeCloseTo(sum, 12);
			expect(policy.recall).toBeGreaterThanOrEqual(0);
			expect(policy.recall).toBeLessThanOrEqual(1);
		}
		expect(JSON.parse(JSON.stringify(document))).toEqual(document);
	});

	it("holds output fixed across policies and off's recall at 1", () => {
		const outputs = new Set(document.policies.map((policy) => policy.output_tokens));
		expect(outputs.size).toBe(1);
		const off = document.policies[0];
		expect(off?.recall).toBe(1);
		expect(off?.rewrites).toBe(0);
		for (const row of off?.per_trajectory ?? []) expect(row.recall).toBe(1);
	});

	it("prints one row per policy with savings against off and cost against the oracle", () => {
		const rows = tableRows(document);
		const off = rows.find((row) => row.name === "off");
		const oracle = rows.find((row) => row.name === "oracle");
		expect(off?.savingVsOff).toBeCloseTo(0, 12);
		expect(oracle?.versusOracle).toBeCloseTo(1, 12);
		for (const row of rows) {
			expect(row.versusOracle).toBeCloseTo(row.cost / (oracle?.cost ?? 1), 12);
			expect(row.savingVsOff).toBeCloseTo(1 - row.cost / (off?.cost ?? 1), 12);
		}
		const text = formatReport(document);
		for (const row of rows) expect(text).toMatch(new RegExp(`^${row.name} +\\$`, "m"));
		expect(text).toContain("output is identical under every policy");
		expect(text).toContain("actions are held fixed");
	});

	it("writes a self-contained page with the per-round data of every policy and trajectory", () => {
		expect(html).toMatch(/^<!doctype html>/);
		expect(html).not.toMatch(/\s(src|href)=/);
		const data = JSON.parse(
			/<script type="application\/json" id="bench-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "{}",
		);
		expect(data.policies).toEqual(document.policies.map((policy) => policy.name));
		expect(data.files.map((file: { file: string }) => file.file)).toEqual(["a.jsonl", "b/c.jsonl"]);
		expect(data.series[0][0][0]).toHaveLength(15);
	});
});
