import { type Dirent, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { editDistance } from "../llm/text.js";
import { splitFrontMatter } from "./front-matter.js";
import { defineTool, failure, type Tool } from "./tool.js";

// Skills: folders holding a SKILL.md (front matter with name and description, then the instructions). The prompt
// carries a compact index; skill_view returns one body on demand.

/** A skill found on disk. The body is read again by skill_view, so edits show up without a restart. */
export interface Skill {
	name: string;
	/** The front matter's description ("" when absent). */
	description: string;
	/** Absolute path of the skill's folder. */
	directory: string;
	/** Absolute path of its SKILL.md. */
	path: string;
}

/** A SKILL.md split into its front matter fields and its body. */
export interface ParsedSkillFile {
	name: string;
	description: string;
	body: string;
}

export const SKILL_VIEW_TOOL_NAME = "skill_view";
/** `skills.indexMaxEntries`: skills named in the prompt's index. */
export const SKILL_INDEX_MAX_ENTRIES = 60;
/** Characters of one description in the index. */
const DESCRIPTION_MAX_CHARACTERS = 200;
const CLOSE_MATCHES = 5;
const KNOWN_NAMES_SHOWN = 20;

/**
 * Where skills live, first wins on a name clash: `<home>/skills` ($SNOWPEA_HOME/skills), then
 * `<project>/.snowpea/skills`, then `<project>/.claude/skills`. Pure.
 */
export function skillDirectories(home: string, project: string): string[] {
	return [join(home, "skills"), join(project, ".snowpea", "skills"), join(project, ".claude", "skills")];
}

/**
 * Reads a SKILL.md's front matter, parsed minimally: the file opens with a `---` line, `key: value` lines follow
 * (quotes around a value are dropped; indented lines continue the previous value, as after `>` or `|`) until the
 * next `---` line; the rest is the body, trimmed. Undefined when there is no front matter or no name. Pure.
 */
export function parseSkillFile(text: string): ParsedSkillFile | undefined {
	const front = splitFrontMatter(text);
	const name = front?.fields.get("name")?.scalar.trim() ?? "";
	if (!front || name === "") return undefined;
	return { name, description: (front.fields.get("description")?.scalar ?? "").trim(), body: front.body };
}

/**
 * The skills in `dirs`: each sub-folder (links to folders followed) holding a SKILL.md with a name, in directory
 * order and then by folder name. A folder without SKILL.md or without a name is skipped; on a name clash the first
 * found wins. Missing or unreadable directories are passed over; never throws.
 */
export function discoverSkills(dirs: readonly string[]): Skill[] {
	const skills: Skill[] = [];
	const names = new Set<string>();
	for (const root of dirs) {
		let entries: Dirent[];
		try {
			entries = readdirSync(root, { withFileTypes: true });
		} catch {
			continue;
		}
		const folders = entries
			.map((entry) => entry.name)
			.filter((name) => !name.startsWith("."))
			.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
		for (const folder of folders) {
			const directory = join(root, folder);
			const path = join(directory, "SKILL.md");
			const parsed = readSkill(path);
			if (!parsed || names.has(parsed.name)) continue;
			names.add(parsed.name);
			skills.push({ name: parsed.name, description: parsed.description, directory, path });
		}
	}
	return skills;
}

/**
 * The skills index for the prompt's context tier: a header line, then "- name: description" for at most
 * `maxEntries` skills (descriptions on one line, clipped), then how many were left out. "" when there are none. Pure.
 */
export function skillIndex(skills: readonly Skill[], maxEntries: number = SKILL_INDEX_MAX_ENTRIES): string {
	if (skills.length === 0) return "";
	const shown = skills.slice(0, Math.max(0, maxEntries));
	const lines = [
		`Skills (call ${SKILL_VIEW_TOOL_NAME}(name) to load a skill's instructions before you do what it covers):`,
		...shown.map((skill) => {
			const description = oneLine(skill.description);
			return description === "" ? `- ${skill.name}` : `- ${skill.name}: ${description}`;
		}),
	];
	const more = skills.length - shown.length;
	if (more > 0) lines.push(`(${more} more skill(s) not listed; ${SKILL_VIEW_TOOL_NAME} loads any skill by its name)`);
	return lines.join("\n");
}

/**
 * `skill_view(name)`: a skill's SKILL.md body (read fresh), headed by where its folder is. An unknown name fails
 * with `unknown_skill` and the close matches (or the known names). `skills` may be a function for a list that is
 * rediscovered during the session.
 */
export function createSkillViewTool(skills: readonly Skill[] | (() => readonly Skill[])): Tool {
	return defineTool({
		name: SKILL_VIEW_TOOL_NAME,
		description:
			"Load a skill's instructions by name (the skills index in the system prompt lists them). Returns its SKILL.md body; files it mentions are relative to the skill's folder, shown on the first line.",
		parameters: z.object({ name: z.string().describe("The skill's name, as in the skills index.") }),
		permission: "read",
		readOnly: true,
		async run({ name }) {
			const known = typeof skills === "function" ? skills() : skills;
			const wanted = name.trim();
			const lower = wanted.toLowerCase();
			const skill =
				known.find((candidate) => candidate.name === wanted) ??
				uniqueOrUndefined(known.filter((candidate) => candidate.name.toLowerCase() === lower));
			if (!skill) return failure("unknown_skill", unknownSkillMessage(wanted, known));
			const parsed = readSkill(skill.path);
			if (!parsed) {
				return failure(
					"not_found",
					`${SKILL_VIEW_TOOL_NAME}: ${skill.path} is gone or no longer has a name in its front matter`,
				);
			}
			const body =
				parsed.body === ""
					? `(this skill has no instructions beyond its description: ${parsed.description})`
					: parsed.body;
			return {
				ok: true,
				content: `${skillHeader(skill.name)} (folder ${skill.directory}; paths in it are relative to that folder)\n\n${body}`,
				display: `skill ${skill.name}`,
				details: { skill: skill.name, path: skill.path },
			};
		},
	});
}

function skillHeader(name: string): string {
	return `Skill "${name}"`;
}

function readSkill(path: string): ParsedSkillFile | undefined {
	try {
		if (!statSync(path).isFile()) return undefined;
		return parseSkillFile(readFileSync(path, "utf8"));
	} catch {
		return undefined;
	}
}

function oneLine(text: string): string {
	const line = text.replace(/\s+/g, " ").trim();
	return line.length <= DESCRIPTION_MAX_CHARACTERS ? line : `${line.slice(0, DESCRIPTION_MAX_CHARACTERS - 1)}…`;
}

function uniqueOrUndefined<Item>(items: readonly Item[]): Item | undefined {
	return items.length === 1 ? items[0] : undefined;
}

function unknownSkillMessage(name: string, known: readonly Skill[]): string {
	const prefix = `${SKILL_VIEW_TOOL_NAME}: no skill named "${name}".`;
	if (known.length === 0) return `${prefix} No skills are installed.`;
	const lower = name.toLowerCase();
	const close = known
		.map((skill) => {
			const candidate = skill.name.toLowerCase();
			const contains = lower !== "" && (candidate.includes(lower) || lower.includes(candidate));
			return { name: skill.name, distance: contains ? 0 : editDistance(lower, candidate) };
		})
		.filter((entry) => entry.distance <= Math.max(2, Math.floor(lower.length / 3)))
		.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
		.slice(0, CLOSE_MATCHES)
		.map((entry) => entry.name);
	if (close.length > 0) return `${prefix} Close matches: ${close.join(", ")}.`;
	const names = known.slice(0, KNOWN_NAMES_SHOWN).map((skill) => skill.name);
	const more = known.length > names.length ? `, and ${known.length - names.length} more` : "";
	return `${prefix} Known skills: ${names.join(", ")}${more}.`;
}
