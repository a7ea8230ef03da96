import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { skillPrunedMarker, skillViewMarkers } from "../context/skill-markers.js";
import type { Message } from "../llm/types.js";
import {
	createSkillViewTool,
	discoverSkills,
	parseSkillFile,
	type Skill,
	skillDirectories,
	skillIndex,
} from "./skills.js";
import type { ToolContext } from "./tool.js";

function scratch(): string {
	return mkdtempSync(join(tmpdir(), "snowpea-skills-"));
}

function write(root: string, path: string, text: string): void {
	mkdirSync(dirname(join(root, path)), { recursive: true });
	writeFileSync(join(root, path), text);
}

const skillFile = (name: string, description: string, body: string) =>
	`---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

function context(cwd: string): ToolContext {
	return {
		cwd,
		home: join(cwd, "home"),
		sessionId: "s",
		callId: "c",
		signal: new AbortController().signal,
		spillDir: join(cwd, "spill"),
	};
}

describe("parseSkillFile", () => {
	it("reads name and description from the front matter and the body after it", () => {
		expect(parseSkillFile(skillFile("deploy", "Ship a release", "# Deploy\n\nRun the script."))).toEqual({
			name: "deploy",
			description: "Ship a release",
			body: "# Deploy\n\nRun the script.",
		});
	});

	it("drops quotes, joins continued lines and accepts CRLF", () => {
		const text = '---\r\nname: "review"\r\ndescription: >\r\n  Review a change\r\n  before merging\r\n---\r\nBody\r\n';
		expect(parseSkillFile(text)).toEqual({
			name: "review",
			description: "Review a change before merging",
			body: "Body",
		});
	});

	it("rejects a file without front matter or without a name", () => {
		expect(parseSkillFile("# Just markdown\n")).toBeUndefined();
		expect(parseSkillFile("---\ndescription: nameless\n---\nbody")).toBeUndefined();
		expect(parseSkillFile("---\nname: unclosed\nbody")).toBeUndefined();
	});
});

describe("discoverSkills", () => {
	it("finds SKILL.md folders in every directory; the first directory wins a name clash", () => {
		const root = scratch();
		const home = join(root, "home");
		const project = join(root, "project");
		write(home, "skills/deploy/SKILL.md", skillFile("deploy", "Home deploy", "home body"));
		write(project, ".snowpea/skills/deploy/SKILL.md", skillFile("deploy", "Project deploy", "project body"));
		write(project, ".snowpea/skills/lint/SKILL.md", skillFile("lint", "Run the linters", "lint body"));
		write(project, ".claude/skills/review/SKILL.md", skillFile("review", "Review a change", "review body"));
		write(project, ".claude/skills/empty-folder/notes.md", "no skill here");
		write(project, ".claude/skills/nameless/SKILL.md", "---\ndescription: no name\n---\nbody");
		const skills = discoverSkills([...skillDirectories(home, project), join(root, "missing")]);
		expect(skills.map((skill) => [skill.name, skill.description])).toEqual([
			["deploy", "Home deploy"],
			["lint", "Run the linters"],
			["review", "Review a change"],
		]);
		expect(skills[0]).toMatchObject({
			directory: join(home, "skills/deploy"),
			path: join(home, "skills/deploy/SKILL.md"),
		});
	});
});

const skill = (name: string, description: string): Skill => ({
	name,
	description,
	directory: `/skills/${name}`,
	path: `/skills/${name}/SKILL.md`,
});

describe("skillIndex", () => {
	it("lists each skill on one line, at most 60, and says how many were left out", () => {
		const skills = Array.from({ length: 65 }, (_, index) => skill(`skill-${index}`, `Does thing ${index}`));
		skills[0] = skill("multi", "First line\nsecond line");
		const lines = skillIndex(skills).split("\n");
		expect(lines[0]).toContain("skill_view");
		const entries = lines.filter((line) => line.startsWith("- "));
		expect(entries).toHaveLength(60);
		expect(entries[0]).toBe("- multi: First line second line");
		expect(entries[59]).toBe("- skill-59: Does thing 59");
		expect(lines.at(-1)).toBe("(5 more skill(s) not listed; skill_view loads any skill by its name)");
	});

	it("clips a long description and is empty without skills", () => {
		const [, entry] = skillIndex([skill("long", "w".repeat(500))]).split("\n");
		expect(entry?.length).toBeLessThan(220);
		expect(entry?.endsWith("…")).toBe(true);
		expect(skillIndex([])).toBe("");
	});
});

describe("skill_view", () => {
	it("returns the body, read fresh, with the skill's folder", async () => {
		const root = scratch();
		write(root, "skills/deploy/SKILL.md", skillFile("deploy", "Ship", "Run scripts/ship.sh"));
		const tool = createSkillViewTool(discoverSkills([join(root, "skills")]));
		expect(tool.readOnly).toBe(true);
		expect(tool.permission).toBe("read");
		const result = await tool.execute(JSON.stringify({ name: "deploy" }), context(root));
		expect(result.ok).toBe(true);
		expect(result.content).toContain(`Skill "deploy" (folder ${join(root, "skills/deploy")}`);
		expect(result.content).toContain("Run scripts/ship.sh");
		expect(result.content).not.toContain("description:");

		write(root, "skills/deploy/SKILL.md", skillFile("deploy", "Ship", "Run scripts/ship-v2.sh"));
		expect((await tool.execute('{"name":"deploy"}', context(root))).content).toContain("ship-v2.sh");
	});

	it("fails on an unknown name, listing close matches", async () => {
		const tool = createSkillViewTool([skill("deploy", ""), skill("deploy-docs", ""), skill("review", "")]);
		const result = await tool.execute('{"name":"deplyo"}', context(scratch()));
		expect(result).toMatchObject({ ok: false, errorCode: "unknown_skill" });
		expect(result.content).toContain('no skill named "deplyo"');
		expect(result.content).toContain("Close matches: deploy");
		expect(result.content).not.toContain("review");

		const far = await tool.execute('{"name":"zzzzzzzz"}', context(scratch()));
		expect(far.content).toContain("Known skills: deploy, deploy-docs, review");
	});
});

function view(id: string, name: string, ok = true): Message[] {
	return [
		{ role: "assistant", text: "", toolCalls: [{ id, name: "skill_view", arguments: JSON.stringify({ name }) }] },
		{
			role: "tool",
			toolCallId: id,
			toolName: "skill_view",
			content: `Skill "${name}" (folder /x)\n\nbody`,
			isError: !ok,
		},
	];
}

describe("skillViewMarkers", () => {
	const messages: Message[] = [
		{ role: "user", content: [{ type: "text", text: "go" }] },
		...view("c1", "deploy"),
		...view("c2", "review"),
		...view("c3", "missing", false),
		{ role: "assistant", text: "", toolCalls: [{ id: "r1", name: "read_file", arguments: '{"path":"a"}' }] },
		{ role: "tool", toolCallId: "r1", toolName: "read_file", content: "file", isError: false },
		...view("c4", "deploy"),
	];

	it("marks every successful view older than the most recent ones", () => {
		expect(skillViewMarkers(messages, 2)).toEqual(
			new Map([["c1", '[skill deploy body pruned — call skill_view("deploy") to reload it]']]),
		);
		expect([...skillViewMarkers(messages, 0).keys()]).toEqual(["c1", "c2", "c4"]);
		expect(skillViewMarkers(messages, 3).size).toBe(0);
	});

	it("takes the name from the result when the arguments are unreadable", () => {
		const broken: Message[] = [
			{ role: "assistant", text: "", toolCalls: [{ id: "b1", name: "skill_view", arguments: "{oops" }] },
			{
				role: "tool",
				toolCallId: "b1",
				toolName: "skill_view",
				content: 'Skill "lint" (folder /x)\n\nbody',
				isError: false,
			},
		];
		expect(skillViewMarkers(broken, 0).get("b1")).toBe(skillPrunedMarker("lint"));
	});
});
