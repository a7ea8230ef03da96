import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeSpill } from "./spill.js";

describe("writeSpill", () => {
	it("writes the text to a content-addressed 0600 file in a new 0700 directory", async () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-spill-"));
		const directory = join(root, "a", "spill");
		const text = "full output 漢字 😀\n";
		const path = await writeSpill(directory, text);
		const digest = createHash("sha256").update(text).digest("hex").slice(0, 16);
		expect(path).toBe(join(directory, `output-${digest}.txt`));
		expect(isAbsolute(path)).toBe(true);
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(statSync(path).mode & 0o777).toBe(0o600);
		expect(statSync(directory).mode & 0o777).toBe(0o700);
	});

	it("tightens an existing directory to 0700 and gives the same name to the same text", async () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-spill-"));
		const directory = join(root, "open");
		mkdirSync(directory);
		chmodSync(directory, 0o755);
		const first = await writeSpill(directory, "same");
		chmodSync(first, 0o644);
		const second = await writeSpill(directory, "same");
		expect(second).toBe(first);
		expect(statSync(directory).mode & 0o777).toBe(0o700);
		expect(statSync(second).mode & 0o777).toBe(0o600);
		expect(await writeSpill(directory, "other")).not.toBe(first);
	});
});
