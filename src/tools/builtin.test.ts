import { describe, expect, it } from "vitest";
import { builtinTools } from "./builtin.js";

describe("builtinTools", () => {
	it("lists the core tools in a fixed order", () => {
		expect(builtinTools().map((tool) => tool.name)).toEqual([
			"read_file",
			"view_image",
			"write_file",
			"edit_file",
			"shell",
			"execute_code",
			"grep",
			"glob",
			"list_dir",
			"ask_user",
		]);
	});

	it("declares permissions consistently and renders identical definitions every time", () => {
		for (const tool of builtinTools()) {
			expect(tool.source).toBe("builtin");
			expect(tool.group).toBeUndefined();
			expect(tool.readOnly).toBe(tool.permission === "read");
			expect(tool.definition.parameters.type).toBe("object");
			expect(tool.description.length).toBeGreaterThan(40);
			expect(tool.description.length).toBeLessThan(700);
		}
		expect(JSON.stringify(builtinTools().map((tool) => tool.definition))).toBe(
			JSON.stringify(builtinTools().map((tool) => tool.definition)),
		);
	});
});
