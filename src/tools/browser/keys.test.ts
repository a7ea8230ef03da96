import { describe, expect, it } from "vitest";
import { parseKeyCombination } from "./keys.js";

describe("parseKeyCombination", () => {
	it("turns the spellings models use into Playwright key names, modifiers first", () => {
		expect(parseKeyCombination("w")).toEqual({ keys: ["w"] });
		expect(parseKeyCombination("space")).toEqual({ keys: ["Space"] });
		expect(parseKeyCombination(" ")).toEqual({ keys: ["Space"] });
		expect(parseKeyCombination("ArrowUp")).toEqual({ keys: ["ArrowUp"] });
		expect(parseKeyCombination("up")).toEqual({ keys: ["ArrowUp"] });
		expect(parseKeyCombination("ctrl+shift+Z")).toEqual({ keys: ["Control", "Shift", "Z"] });
		expect(parseKeyCombination("Control++")).toEqual({ keys: ["Control", "+"] });
		expect(parseKeyCombination("f5")).toEqual({ keys: ["F5"] });
	});

	it("refuses an empty key or an empty part", () => {
		expect("error" in parseKeyCombination("")).toBe(true);
		expect("error" in parseKeyCombination("Control+")).toBe(true);
	});
});
