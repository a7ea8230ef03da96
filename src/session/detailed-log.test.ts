import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emptyUsage } from "../llm/types.js";
import { DetailedLog } from "./detailed-log.js";

const part = (bytes: number) => ({ bytes, tokens: bytes / 4 });
const report = (round: number) => ({
	round,
	system: part(100),
	tools: part(200),
	messages: part(300),
	toolResults: part(120),
	total: part(600),
});

describe("detailed log", () => {
	it("writes request and response records with seq increasing across restarts", () => {
		const path = join(mkdtempSync(join(tmpdir(), "snowpea-log-")), "logs", "llm.jsonl");
		const first = DetailedLog.open(path, "s1");
		first.observe({ type: "context", report: report(1) });
		first.observe({ type: "usage", round: 1, usage: { ...emptyUsage(), input: 150, cacheRead: 100, output: 9 } });
		appendFileSync(path, '{"seq": 2, "torn'); // a writer killed mid-line
		const second = DetailedLog.open(path, "s1");
		second.observe({ type: "context", report: report(2) });
		const lines = readFileSync(path, "utf8")
			.split("\n")
			.filter((line) => line.startsWith('{"seq"') && line.endsWith("}"))
			.map((line) => JSON.parse(line) as Record<string, unknown>);
		expect(lines.map((line) => [line.seq, line.event, line.round])).toEqual([
			[1, "request", 1],
			[2, "response", 1],
			[3, "request", 2],
		]);
		expect(lines[0]).toMatchObject({ request_bytes: 600, tool_result_bytes: 120, estimated_tokens: 150 });
		expect(lines[1]).toMatchObject({
			input_tokens: 150,
			cached_input_tokens: 100,
			cache_write_tokens: 0,
			output_tokens: 9,
			tool_result_bytes: 120,
		});
	});

	it("rotates past its size limit, keeping one backup, and seq goes on", () => {
		const path = join(mkdtempSync(join(tmpdir(), "snowpea-log-")), "llm.jsonl");
		const log = DetailedLog.open(path, "s1", 400);
		for (let round = 1; round <= 12; round++) log.observe({ type: "context", report: report(round) });
		const seqs = (file: string) =>
			readFileSync(file, "utf8")
				.trim()
				.split("\n")
				.map((line) => (JSON.parse(line) as { seq: number }).seq);
		const current = seqs(path);
		const backup = seqs(`${path}.1`);
		expect(backup.at(-1)! + 1).toBe(current[0]);
		expect(current.at(-1)).toBe(12);
		const reopened = DetailedLog.open(path, "s1", 400);
		reopened.observe({ type: "context", report: report(13) });
		expect(seqs(path).at(-1) ?? seqs(`${path}.1`).at(-1)).toBe(13);
	});
});
