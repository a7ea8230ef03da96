import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clipBytes, clipBytesEnd, headTail, splitLines, stripAnsi, utf8Bytes } from "./text.js";

const MARK = "\u0000MARK\u0000";
const marker = () => MARK;

/** Round-trips through UTF-8: equal only when the text holds no split surrogate pair. */
const isWellFormed = (text: string) => Buffer.from(text, "utf8").toString("utf8") === text;

const unicodeText = fc.string({ unit: "binary", maxLength: 300 });
const lineText = fc
	.array(fc.oneof(fc.string({ unit: "grapheme", maxLength: 40 }), fc.constant("😀🎉"), fc.constant("漢字かな")), {
		maxLength: 40,
	})
	.map((lines) => lines.map((line) => line.replace(/\n/g, "")).join("\n"));

describe("utf8Bytes", () => {
	it("counts bytes, not characters", () => {
		expect(utf8Bytes("abc")).toBe(3);
		expect(utf8Bytes("é")).toBe(2);
		expect(utf8Bytes("漢")).toBe(3);
		expect(utf8Bytes("😀")).toBe(4);
	});
});

describe("clipBytes", () => {
	it("keeps the text when it fits", () => {
		expect(clipBytes("hello", 5)).toBe("hello");
	});

	it("never splits an emoji or a CJK character", () => {
		expect(clipBytes("a😀b", 4)).toBe("a");
		expect(clipBytes("a😀b", 5)).toBe("a😀");
		expect(clipBytes("漢字", 5)).toBe("漢");
		expect(clipBytesEnd("a😀b", 4)).toBe("b");
		expect(clipBytesEnd("漢字", 3)).toBe("字");
	});

	it("gives nothing for a budget of zero or less", () => {
		expect(clipBytes("abc", 0)).toBe("");
		expect(clipBytesEnd("abc", -1)).toBe("");
	});

	it("is the longest well-formed prefix within the budget", () => {
		fc.assert(
			fc.property(unicodeText, fc.integer({ min: 0, max: 400 }), (text, max) => {
				const prefix = clipBytes(text, max);
				expect(text.startsWith(prefix)).toBe(true);
				expect(utf8Bytes(prefix)).toBeLessThanOrEqual(max);
				expect(isWellFormed(prefix)).toBe(true);
				if (prefix.length < text.length) {
					const nextCharacter = String.fromCodePoint(text.codePointAt(prefix.length)!);
					expect(utf8Bytes(prefix) + utf8Bytes(nextCharacter)).toBeGreaterThan(max);
				}
			}),
		);
	});

	it("clipBytesEnd is a well-formed suffix within the budget", () => {
		fc.assert(
			fc.property(unicodeText, fc.integer({ min: 0, max: 400 }), (text, max) => {
				const suffix = clipBytesEnd(text, max);
				expect(text.endsWith(suffix)).toBe(true);
				expect(utf8Bytes(suffix)).toBeLessThanOrEqual(max);
				expect(isWellFormed(suffix)).toBe(true);
			}),
		);
	});
});

describe("stripAnsi", () => {
	it("removes colours, cursor moves, titles and hyperlinks", () => {
		expect(stripAnsi("\u001b[1;31merror\u001b[0m: bad")).toBe("error: bad");
		expect(stripAnsi("\u001b[2K\u001b[1Gdone")).toBe("done");
		expect(stripAnsi("\u001b]0;title\u0007text")).toBe("text");
		expect(stripAnsi("\u001b]8;;https://x.test\u001b\\link\u001b]8;;\u001b\\")).toBe("link");
		expect(stripAnsi("\u001b(Bplain")).toBe("plain");
	});

	it("leaves other text alone, including multi-byte characters", () => {
		expect(stripAnsi("漢字 😀 [1m not an escape")).toBe("漢字 😀 [1m not an escape");
	});
});

describe("splitLines", () => {
	it("keeps line breaks and counts a last line without one", () => {
		expect(splitLines("")).toEqual([]);
		expect(splitLines("a\nb")).toEqual(["a\n", "b"]);
		expect(splitLines("a\n\n")).toEqual(["a\n", "\n"]);
	});
});

describe("headTail", () => {
	const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`).join("\n");

	it("returns short text unchanged", () => {
		const result = headTail("a\nb\n", { maxBytes: 100, marker });
		expect(result).toEqual({ text: "a\nb\n", omittedLines: 0, omittedBytes: 0, truncated: false });
	});

	it("keeps whole lines from both ends, more from the tail, around the marker", () => {
		const text = numbered(1000);
		const result = headTail(text, {
			maxBytes: 200,
			marker: (lines, bytes) => `[… ${lines} lines (${bytes} bytes) omitted]`,
		});
		expect(result.truncated).toBe(true);
		const [head, tail] = result.text.split(/\[… \d+ lines \(\d+ bytes\) omitted\]\n/);
		expect(head).toMatch(/^line 1\nline 2\n/);
		expect(tail).toMatch(/line 999\nline 1000$/);
		const headLines = head!.split("\n").filter(Boolean).length;
		const tailLines = tail!.split("\n").length;
		expect(tailLines).toBeGreaterThan(headLines);
		expect(result.omittedLines).toBe(1000 - headLines - tailLines);
		expect(result.text).toContain(`[… ${result.omittedLines} lines (${result.omittedBytes} bytes) omitted]`);
		expect(utf8Bytes(head!) + utf8Bytes(tail!) + result.omittedBytes).toBe(utf8Bytes(text));
	});

	it("respects line limits", () => {
		const result = headTail(numbered(50), { maxBytes: 10_000, headLines: 2, tailLines: 3, marker });
		expect(result.text).toBe(`line 1\nline 2\n${MARK}\nline 48\nline 49\nline 50`);
		expect(result.omittedLines).toBe(45);
	});

	it("cuts one huge line by bytes without splitting characters", () => {
		const line = "漢😀".repeat(10_000);
		const result = headTail(line, { maxBytes: 1000, marker });
		expect(result.truncated).toBe(true);
		expect(result.omittedLines).toBe(1);
		const [head, tail] = result.text.split(`\n${MARK}\n`);
		expect(head!.length).toBeGreaterThan(0);
		expect(tail!.length).toBeGreaterThan(0);
		expect(line.startsWith(head!)).toBe(true);
		expect(line.endsWith(tail!)).toBe(true);
		expect(isWellFormed(head!) && isWellFormed(tail!)).toBe(true);
		expect(utf8Bytes(tail!)).toBeGreaterThan(utf8Bytes(head!));
	});

	it("cuts a huge first or last line by bytes but keeps the other end in whole lines", async () => {
		const huge = "a".repeat(5000);
		const first = headTail(`${huge}\nok 1\nok 2\n`, { maxBytes: 1000, marker });
		expect(first.text).toMatch(new RegExp(`^a{989}\\n${MARK}\\nok 1\\nok 2\\n$`));
		expect(first.omittedLines).toBe(1);
		expect(first.omittedBytes).toBe(5001 - 989);
		const fits = headTail(`${"b".repeat(400)}\n${"c".repeat(2000)}\nok 1`, { maxBytes: 1000, marker });
		expect(fits.text).toMatch(new RegExp(`^b{400}\\n${MARK}\\nok 1$`));
		expect(fits.omittedLines).toBe(1);
		const last = headTail(`ok 1\nok 2\n${huge}`, { maxBytes: 1000, marker });
		expect(last.text).toMatch(new RegExp(`^ok 1\\nok 2\\n${MARK}\\na{990}$`));
		expect(last.omittedBytes).toBe(5000 - 990);
	});

	it("never exceeds the cap plus the marker line, keeps a prefix and a suffix, and stays valid UTF-8", () => {
		fc.assert(
			fc.property(
				fc.oneof(lineText, unicodeText),
				fc.integer({ min: 0, max: 300 }),
				fc.double({ min: 0, max: 1, noNaN: true }),
				fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
				fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
				(text, maxBytes, headShare, headLines, tailLines) => {
					fc.pre(!text.includes("\u0000"));
					const result = headTail(text, { maxBytes, headShare, headLines, tailLines, marker });
					if (!result.truncated) {
						expect(result.text).toBe(text);
						expect(utf8Bytes(text)).toBeLessThanOrEqual(maxBytes);
						return;
					}
					expect(utf8Bytes(result.text)).toBeLessThanOrEqual(maxBytes + utf8Bytes(MARK) + 1);
					const at = result.text.indexOf(MARK);
					expect(at).toBeGreaterThanOrEqual(0);
					const head = result.text.slice(0, at);
					const tail = result.text.slice(at + MARK.length).replace(/^\n/, "");
					expect(text.startsWith(head.endsWith("\n") && !text.startsWith(head) ? head.slice(0, -1) : head)).toBe(true);
					expect(text.endsWith(tail)).toBe(true);
					expect(isWellFormed(result.text)).toBe(isWellFormed(text));
					expect(result.omittedBytes).toBeGreaterThan(0);
				},
			),
			{ numRuns: 500 },
		);
	});
});
