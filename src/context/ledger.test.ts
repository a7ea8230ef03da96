import { describe, expect, it } from "vitest";
import { nextSpillPosition, type ReplaceDecision, spillPath, spillsToWrite } from "./ledger.js";

function decision(entry: number, position?: number): ReplaceDecision {
	return {
		kind: "replace",
		round: 2,
		entry,
		toolName: "shell",
		reason: "prune",
		placeholder: "[x]",
		bytesBefore: 10,
		bytesAfter: 3,
		...(position === undefined ? {} : { spill: { position, path: spillPath("/spill", position) } }),
	};
}

describe("spill positions", () => {
	it("S2: a spill file is named by its position alone, in four digits or more", () => {
		expect(spillPath("/spill/s1", 3)).toBe("/spill/s1/0003.txt");
		expect(spillPath("/spill/s1/", 12)).toBe("/spill/s1/0012.txt");
		expect(spillPath("/spill", 12_345)).toBe("/spill/12345.txt");
	});

	it("the next position is one past the highest in the ledger, also when a failed spill left a gap", () => {
		expect(nextSpillPosition([])).toBe(0);
		expect(nextSpillPosition([decision(1, 0), decision(2), decision(3, 1)])).toBe(2);
		expect(nextSpillPosition([decision(1, 0), decision(3, 2)])).toBe(3);
	});

	it("a decision reusing a snip's file needs no new write", () => {
		const ledger = [decision(4, 0)];
		const fresh = decision(5, 1);
		expect(spillsToWrite(ledger, [decision(4, 0), fresh, decision(6)])).toEqual([fresh]);
	});
});
