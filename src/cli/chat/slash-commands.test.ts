import { describe, expect, it } from "vitest";
import { editDistance } from "../../llm/text.js";
import { closeMatches, helpText, parseInput, SLASH_COMMANDS, unknownCommandMessage } from "./slash-commands.js";

describe("parseInput", () => {
	it("reads commands with their arguments", () => {
		expect(parseInput("/mode plan")).toEqual({ kind: "command", name: "mode", args: "plan" });
		expect(parseInput("  /model   anthropic:claude-sonnet-4-5  ")).toEqual({
			kind: "command",
			name: "model",
			args: "anthropic:claude-sonnet-4-5",
		});
		expect(parseInput("/COST")).toEqual({ kind: "command", name: "cost", args: "" });
		expect(parseInput("/exit")).toEqual({ kind: "command", name: "quit", args: "" });
		expect(parseInput("/attach notes/a b.txt")).toEqual({ kind: "command", name: "attach", args: "notes/a b.txt" });
	});

	it("treats everything else as a prompt", () => {
		expect(parseInput("fix the bug")).toEqual({ kind: "prompt", text: "fix the bug" });
		expect(parseInput("/usr/bin/env is missing")).toEqual({ kind: "prompt", text: "/usr/bin/env is missing" });
		expect(parseInput("//help is a path")).toEqual({ kind: "prompt", text: "/help is a path" });
		expect(parseInput("   ")).toEqual({ kind: "empty" });
	});

	it("answers an unknown command with its close matches", () => {
		expect(parseInput("/cots")).toEqual({ kind: "unknown", name: "cots", suggestions: ["cost"] });
		expect(parseInput("/contxt")).toEqual({ kind: "unknown", name: "contxt", suggestions: ["context"] });
		expect(parseInput("/co")).toEqual({ kind: "unknown", name: "co", suggestions: ["compact", "context", "cost"] });
		expect(parseInput("/frobnicate")).toEqual({ kind: "unknown", name: "frobnicate", suggestions: [] });
	});
});

describe("unknownCommandMessage", () => {
	it("lists suggestions, or points at /help", () => {
		expect(unknownCommandMessage("cots", ["cost"])).toBe("unknown command /cots — did you mean /cost?");
		expect(unknownCommandMessage("co", ["compact", "context", "cost"])).toBe(
			"unknown command /co — did you mean /compact, /context or /cost?",
		);
		expect(unknownCommandMessage("zzz", [])).toBe("unknown command /zzz; /help lists the commands");
	});
});

describe("closeMatches and editDistance", () => {
	it("counts insertions, deletions and substitutions", () => {
		expect(editDistance("kitten", "sitting")).toBe(3);
		expect(editDistance("", "abc")).toBe(3);
		expect(editDistance("same", "same")).toBe(0);
	});

	it("keeps short words strict", () => {
		expect(closeMatches("nw", ["new", "now", "help"])).toEqual(["new", "now"]);
		expect(closeMatches("xyz", ["new"])).toEqual([]);
		expect(closeMatches("quti", ["quit", "tools"])).toEqual(["quit"]);
	});
});

describe("helpText", () => {
	it("names every command", () => {
		const text = helpText();
		for (const command of SLASH_COMMANDS) expect(text).toContain(`/${command.name}`);
	});
});
