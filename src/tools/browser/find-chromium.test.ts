import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { findChromium } from "./find-chromium.js";

function executable(path: string): string {
	writeFileSync(path, "#!/bin/sh\n");
	chmodSync(path, 0o755);
	return path;
}

describe("findChromium", () => {
	const root = mkdtempSync(join(tmpdir(), "snowpea-find-chromium-"));
	const missingDefault = join(root, "usr-bin-chromium");

	it("uses the configured path, and names it with the install hint when it is missing", () => {
		const configured = executable(join(root, "my-chromium"));
		expect(findChromium(configured, "", missingDefault)).toEqual({ path: configured });
		const missing = findChromium(join(root, "nope"), "", missingDefault);
		expect(missing).toEqual({
			error: `no Chromium found at ${join(root, "nope")}; install it with \`apt-get install chromium\` (or set browser.executablePath)`,
		});
	});

	it("refuses a file that is not executable", () => {
		const plain = join(root, "plain");
		writeFileSync(plain, "");
		expect("error" in findChromium(plain, "", missingDefault)).toBe(true);
	});

	it("falls back to the default path, then chromium or chromium-browser on PATH", () => {
		const first = join(root, "first");
		const second = join(root, "second");
		mkdirSync(first);
		mkdirSync(second);
		const onPath = executable(join(second, "chromium-browser"));
		expect(findChromium(undefined, [first, second].join(delimiter), missingDefault)).toEqual({ path: onPath });
		const preferred = executable(join(root, "default-chromium"));
		expect(findChromium(undefined, [first, second].join(delimiter), preferred)).toEqual({ path: preferred });
		const none = findChromium(undefined, first, missingDefault);
		expect("error" in none && none.error).toContain("or on PATH (chromium, chromium-browser)");
	});
});
