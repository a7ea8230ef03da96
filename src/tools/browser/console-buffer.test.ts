import { describe, expect, it } from "vitest";
import { ConsoleBuffer, formatConsoleBlock } from "./console-buffer.js";

describe("ConsoleBuffer", () => {
	it("reports each message once: a drain empties it", () => {
		const buffer = new ConsoleBuffer();
		buffer.add("error", "boom");
		buffer.add("warning", "careful");
		expect(formatConsoleBlock(buffer.drain())).toBe("Console errors:\n- [error] boom\n- [warning] careful");
		expect(formatConsoleBlock(buffer.drain())).toBe("");
	});

	it("keeps the last 50 distinct messages and says how many older ones were dropped", () => {
		const buffer = new ConsoleBuffer();
		for (let index = 1; index <= 60; index++) buffer.add("error", `message ${index}`);
		const report = buffer.drain();
		expect(report.lines).toHaveLength(50);
		expect(report.lines[0]).toBe("- [error] message 11");
		expect(report.lines.at(-1)).toBe("- [error] message 60");
		expect(formatConsoleBlock(report)).toContain("(10 older messages dropped)");
	});

	it("counts a repeated message instead of repeating it, and collapses whitespace", () => {
		const buffer = new ConsoleBuffer();
		for (let frame = 0; frame < 120; frame++) buffer.add("exception", "TypeError:\n   x is undefined");
		buffer.add("error", "other");
		expect(buffer.drain().lines).toEqual(["- [exception] TypeError: x is undefined (×120)", "- [error] other"]);
	});

	it("cuts very long messages", () => {
		const buffer = new ConsoleBuffer();
		buffer.add("error", "x".repeat(5_000));
		const [line] = buffer.drain().lines;
		expect(line?.length).toBeLessThan(520);
		expect(line?.endsWith("…")).toBe(true);
	});
});
