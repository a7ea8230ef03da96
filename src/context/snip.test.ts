import { describe, expect, it } from "vitest";
import { characterCount, READ_ONLY_SNIP, SIDE_EFFECTING_SNIP, snipGeometry, snipToolResult } from "./snip.js";

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index}\n`).join("");
const bytes = (text: string) => Buffer.byteLength(text, "utf8");

/** The lines a snip kept, without the marker and the omitted line. */
function keptLines(snipped: string): string[] {
	return snipped
		.split("\n")
		.slice(1)
		.filter((line) => line !== "" && !line.startsWith("[… "));
}

describe("snipGeometry", () => {
	it("T2: a tool's own hint wins; otherwise side-effecting tools keep 40/40 and read-only ones 80/12", () => {
		expect(snipGeometry({ readOnly: true, snip: { headLines: 3, tailLines: 2 } })).toEqual({
			...READ_ONLY_SNIP,
			headLines: 3,
			tailLines: 2,
		});
		expect(snipGeometry({ readOnly: false })).toEqual({
			headLines: 40,
			tailLines: 40,
			headChars: 8000,
			tailChars: 8000,
		});
		expect(snipGeometry({ readOnly: true })).toEqual({
			headLines: 80,
			tailLines: 12,
			headChars: 10_000,
			tailChars: 2000,
		});
		expect(snipGeometry(undefined)).toBe(READ_ONLY_SNIP);
	});
});

describe("snipToolResult", () => {
	it("T2: a hint of 3/2 over 600 numbered lines keeps lines 0–2 and 598–599", () => {
		const content = numbered(600);
		const geometry = snipGeometry({ readOnly: true, snip: { headLines: 3, tailLines: 2 } });
		const snipped = snipToolResult(content, { toolName: "read_file", geometry, archivePath: "/s/0003.txt" });
		expect(snipped).toBe(
			`[snipped tool result — read_file (${bytes(content)} bytes) archive=/s/0003.txt head=3 tail=2]\n` +
				"line 0\nline 1\nline 2\n" +
				`[… 595 lines (${bytes(content) - bytes("line 0\nline 1\nline 2\nline 598\nline 599\n")} bytes) omitted]\n` +
				"line 598\nline 599\n",
		);
	});

	it("T2: without a hint, side-effecting tools keep 40 + 40 lines and read-only tools 80 + 12", () => {
		const content = numbered(600);
		const shell = keptLines(snipToolResult(content, { toolName: "shell", geometry: SIDE_EFFECTING_SNIP }));
		expect(shell).toHaveLength(80);
		expect(shell[39]).toBe("line 39");
		expect(shell[40]).toBe("line 560");
		const read = keptLines(snipToolResult(content, { toolName: "read_file", geometry: READ_ONLY_SNIP }));
		expect(read).toHaveLength(92);
		expect(read[79]).toBe("line 79");
		expect(read[80]).toBe("line 588");
	});

	it("T2: a single huge line keeps at most half its characters at the head and a quarter at the tail", () => {
		const content = `${"h".repeat(2000)}${"t".repeat(2000)}`;
		const snipped = snipToolResult(content, { toolName: "fetch_url", geometry: READ_ONLY_SNIP });
		const [marker, head, omitted, tail] = snipped.split("\n");
		expect(marker).toBe("[snipped tool result — fetch_url (4000 bytes) archive=none head=1 tail=1]");
		expect(head).toBe("h".repeat(2000));
		expect(omitted).toBe("[… 1 line (1000 bytes) omitted]");
		expect(tail).toBe("t".repeat(1000));
	});

	it("T2: character limits cap a huge line below half and a quarter", () => {
		const content = "x".repeat(100_000);
		const snipped = snipToolResult(content, { toolName: "fetch_url", geometry: READ_ONLY_SNIP });
		const [, head, , tail] = snipped.split("\n");
		expect(head).toHaveLength(10_000);
		expect(tail).toHaveLength(2000);
	});

	it("caps long lines at the head and the tail by characters too", () => {
		const content = Array.from({ length: 200 }, () => `${"w".repeat(999)}\n`).join("");
		const snipped = snipToolResult(content, { toolName: "grep", geometry: READ_ONLY_SNIP });
		expect(snipped.length).toBeLessThan(12_200);
		expect(snipped.startsWith("[snipped tool result — grep (200000 bytes) archive=none head=10 tail=2]\n")).toBe(true);
	});

	it("never splits a surrogate pair", () => {
		const content = "😀".repeat(3000);
		const [, head, , tail] = snipToolResult(content, { toolName: "t", geometry: READ_ONLY_SNIP }).split("\n");
		expect(head).toBe("😀".repeat(1500));
		expect(tail).toBe("😀".repeat(750));
	});

	it("names 'tool' when the result has no tool name", () => {
		expect(snipToolResult("a\n".repeat(2000), { toolName: "", geometry: READ_ONLY_SNIP })).toMatch(
			/^\[snipped tool result — tool \(4000 bytes\)/,
		);
	});
});

describe("characterCount", () => {
	it("counts a surrogate pair once", () => {
		expect(characterCount("a😀b")).toBe(3);
		expect(characterCount("")).toBe(0);
	});
});
