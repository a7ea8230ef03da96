import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { capOutput } from "./cap-output.js";

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`).join("\n");

describe("capOutput", () => {
	it("leaves text within the cap alone and writes no spill", async () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-cap-"));
		const result = await capOutput("short\n", join(root, "spill"));
		expect(result).toEqual({ text: "short\n", truncated: false, bytes: 6 });
	});

	it("keeps head and tail lines, names the spill file, and saves the spill text", async () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-cap-"));
		const text = numbered(10_000);
		const result = await capOutput(text, join(root, "spill"), { maxBytes: 1000, spillText: `${text}\n[exit 0]` });
		expect(result.truncated).toBe(true);
		expect(result.text.startsWith("line 1\n")).toBe(true);
		expect(result.text.endsWith("\nline 10000")).toBe(true);
		expect(result.text).toContain(`full output in ${result.spillPath}; read_file it to see everything]`);
		expect(readFileSync(result.spillPath!, "utf8")).toBe(`${text}\n[exit 0]`);
	});

	it("says so in the marker when the spill cannot be written", async () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-cap-"));
		writeFileSync(join(root, "blocker"), "a file where the directory should be");
		const result = await capOutput(numbered(5000), join(root, "blocker", "spill"), { maxBytes: 500 });
		expect(result.truncated).toBe(true);
		expect(result.spillPath).toBeUndefined();
		expect(result.text).toMatch(/omitted — the full output could not be saved \(.+\)\]/);
	});
});
