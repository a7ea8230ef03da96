import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_ROLES, budgetLine, loadAgentDefinitions, mergeRoles, parseAgentDefinition } from "./roles.js";

function project(files: Record<string, string>): string {
	const root = mkdtempSync(join(tmpdir(), "snowpea-roles-"));
	const agents = join(root, ".snowpea", "agents");
	mkdirSync(agents, { recursive: true });
	for (const [name, text] of Object.entries(files)) writeFileSync(join(agents, name), text);
	return root;
}

describe("built-in roles", () => {
	it("explore and reviewer only read; executor may write", () => {
		expect(BUILTIN_ROLES.map((role) => [role.name, role.readOnly])).toEqual([
			["explore", true],
			["reviewer", true],
			["executor", false],
		]);
		for (const role of BUILTIN_ROLES) expect(role.maxRounds).toBeGreaterThan(0);
	});

	it("the budget line names the rounds and asks for the report", () => {
		expect(budgetLine(7)).toBe("You have 7 tool rounds for this task; when you are done, answer with your report.");
	});
});

describe("loadAgentDefinitions", () => {
	it("reads name, description, tools, max_rounds and the body as the prompt", () => {
		const root = project({
			"docs.md":
				"---\nname: docs-writer\ndescription: writes docs\ntools: [read_file, write_file]\nmax_rounds: 12\n---\n\nWrite docs.\n",
		});
		const { definitions, warnings } = loadAgentDefinitions(root);
		expect(warnings).toEqual([]);
		expect(definitions).toEqual([
			{
				name: "docs-writer",
				description: "writes docs",
				prompt: "Write docs.",
				readOnly: false,
				maxRounds: 12,
				tools: ["read_file", "write_file"],
				source: join(root, ".snowpea", "agents", "docs.md"),
			},
		]);
	});

	it("a definition listing only read tools is read-only; one without tools is not", () => {
		const root = project({
			"a.md": "---\ndescription: finds things\ntools:\n  - grep\n  - read_file\n---\nFind.",
			"b.md": "---\ndescription: does anything\n---\nDo.",
		});
		const { definitions } = loadAgentDefinitions(root);
		expect(definitions.map((definition) => [definition.name, definition.readOnly, definition.tools])).toEqual([
			["a", true, ["grep", "read_file"]],
			["b", false, undefined],
		]);
	});

	it("skips bad files with one warning each and keeps the good ones", () => {
		const root = project({
			"1-no-front.md": "just text",
			"2-no-description.md": "---\nname: x\n---\nBody",
			"3-bad-rounds.md": "---\ndescription: d\nmax_rounds: lots\n---\nBody",
			"4-empty-body.md": "---\ndescription: d\n---\n",
			"5-bad-name.md": "---\nname: two words\ndescription: d\n---\nBody",
			"6-good.md": "---\ndescription: fine\ncolour: blue\n---\nBody",
			"7-duplicate.md": "---\nname: 6-good\ndescription: again\n---\nBody",
			"notes.txt": "not a definition",
		});
		const { definitions, warnings } = loadAgentDefinitions(root);
		expect(definitions.map((definition) => definition.name)).toEqual(["6-good"]);
		expect(warnings).toHaveLength(7);
		expect(warnings[0]).toMatch(/1-no-front\.md: no front matter.*skipped$/);
		expect(warnings[1]).toMatch(/2-no-description\.md: description is missing/);
		expect(warnings[2]).toMatch(/3-bad-rounds\.md: max_rounds must be a whole number from 1 to 200, got "lots"/);
		expect(warnings[3]).toMatch(/4-empty-body\.md: the body .* is empty/);
		expect(warnings[4]).toMatch(/5-bad-name\.md: name "two words"/);
		expect(warnings[5]).toMatch(/6-good\.md: unknown key "colour" \(ignored\)$/);
		expect(warnings[6]).toMatch(/7-duplicate\.md: another file already defines agent "6-good"/);
	});

	it("a project without .snowpea/agents has no definitions and no warnings", () => {
		expect(loadAgentDefinitions(mkdtempSync(join(tmpdir(), "snowpea-roles-")))).toEqual({
			definitions: [],
			warnings: [],
		});
	});
});

describe("mergeRoles", () => {
	it("a project definition replaces the built-in of its name; others follow the built-ins", () => {
		const parsed = (text: string, name: string) => {
			const result = parseAgentDefinition(text, name, name);
			if ("error" in result) throw new Error(result.error);
			return result.definition;
		};
		const roles = mergeRoles([
			parsed("---\ndescription: mine\n---\nMine.", "zeta"),
			parsed("---\ndescription: my explore\n---\nExplore my way.", "explore"),
		]);
		expect(roles.map((role) => [role.name, role.description])).toEqual([
			["explore", "my explore"],
			["reviewer", BUILTIN_ROLES[1]?.description],
			["executor", BUILTIN_ROLES[2]?.description],
			["zeta", "mine"],
		]);
	});
});
