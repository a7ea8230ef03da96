import { describe, expect, it } from "vitest";
import { capToolResult } from "./cap.js";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

describe("capToolResult", () => {
	it("C1: a cap of 0 passes a 200 000-byte result through unchanged", () => {
		const content = "a".repeat(200_000);
		expect(capToolResult(content, { maxBytes: 0, toolName: "shell" })).toEqual({
			content,
			keptBytes: 200_000,
			droppedBytes: 0,
		});
	});

	it("C2: keeps the first 100 of 500 bytes and names the tool, the dropped and the total bytes", () => {
		const content = "0123456789".repeat(50);
		const capped = capToolResult(content, { maxBytes: 100, toolName: "fetch_url" });
		expect(capped.droppedBytes).toBe(400);
		expect(capped.keptBytes).toBe(100);
		expect(capped.content.startsWith(content.slice(0, 100))).toBe(true);
		expect(capped.content).toBe(
			`${content.slice(0, 100)}\n[fetch_url output cut: kept the first 100 of 500 bytes, dropped 400. ` +
				"Narrow the request, or page through the output, to see the rest.]",
		);
	});

	it("C3: never splits a character: six 3-byte characters capped at 10 bytes keep three", () => {
		const capped = capToolResult("漢字漢字漢字", { maxBytes: 10, toolName: "grep" });
		expect(capped.content.startsWith("漢字漢\n[")).toBe(true);
		expect(capped.keptBytes).toBe(9);
		expect(capped.droppedBytes).toBe(9);
		expect(Buffer.from(capped.content, "utf8").toString("utf8")).toBe(capped.content);
	});

	it("C4: invalid bytes at the start do not drag the cut backwards", () => {
		const content = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("b".repeat(500))]).toString("utf8");
		const capped = capToolResult(content, { maxBytes: 100, toolName: "shell" });
		expect(capped.droppedBytes).toBe(bytes(content) - 100);
		expect(capped.content.slice(0, 96)).toBe(content.slice(0, 96));
		expect(bytes(capped.content.split("\n[")[0] as string)).toBe(100);
	});

	it("C5: a cap of 500 on 1200 bytes drops 700", () => {
		expect(capToolResult("z".repeat(1200), { maxBytes: 500, toolName: "shell" }).droppedBytes).toBe(700);
	});

	it("leaves a result within the cap alone", () => {
		expect(capToolResult("short", { maxBytes: 5, toolName: "shell" }).content).toBe("short");
	});

	it("says where the full text is when a path is given", () => {
		const capped = capToolResult("line\n".repeat(100), {
			maxBytes: 20,
			toolName: "shell",
			fullTextPath: "/s/0001.txt",
		});
		expect(capped.content).toBe(
			`${"line\n".repeat(4)}[shell output cut: kept the first 20 of 500 bytes, dropped 480. ` +
				"The full output is in /s/0001.txt; read_file it to see the rest.]",
		);
	});

	it("never splits a surrogate pair", () => {
		const capped = capToolResult("😀😀😀", { maxBytes: 6, toolName: "shell" });
		expect(capped.keptBytes).toBe(4);
		expect(capped.content.startsWith("😀\n")).toBe(true);
	});
});
