import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type FieldValue, splitFrontMatter, unquote } from "../tools/front-matter.js";
import { READ_ONLY_CHILD_TOOL_NAMES } from "../tools/toolset.js";

// Child agent roles: the built-in ones (explore, reviewer, executor) and the project's own definitions in
// `.snowpea/agents/*.md`. A role decides a child's prompt, whether it may change anything, and its round budget.

/** One kind of child agent delegate_task can start. */
export interface RoleDefinition {
	/** What the parent passes as `agent`: letters, digits, "_" and "-". */
	name: string;
	/** One line telling the parent when to pick this role. */
	description: string;
	/** The role's instructions; they go in the child's system prompt (stable tier), after the child preamble. */
	prompt: string;
	/** True when the child may only read: its tools are the read-only ones (see READ_ONLY_CHILD_TOOL_NAMES). */
	readOnly: boolean;
	/** Round budget when the call gives no `max_rounds`. */
	maxRounds: number;
	/** The definition's own tool list (user-defined agents): the child gets only these (and tool_search). */
	tools?: string[];
	/** "builtin", or the absolute path of the definition file. */
	source: string;
}

/** The most rounds one child may be given. */
export const MAX_CHILD_ROUNDS = 200;

/**
 * Said to every child first, whatever its role: who reads its answer and what that answer should be.
 * Identical bytes for every child, so children of one role share one cached prompt prefix.
 */
export const CHILD_PREAMBLE = `You are a focused subagent. Another snowpea agent delegated one task to you: its brief is the first user message.
You start with no history: the brief and the project are all you know. Stay inside the brief; do not start work it does not ask for.
Your final answer (the reply you give without calling a tool) is your report: the delegating agent reads it, not a person, so
make it complete and self-contained — what you found or changed, with paths and line numbers, and anything left undone.`;

/** The built-in roles, in the order delegate_task lists them. */
export const BUILTIN_ROLES: readonly RoleDefinition[] = [
	{
		name: "explore",
		description:
			"read-only: finds and reads the code that answers a question (where is X, how does Y work) and reports it",
		prompt: `Role: explore. You only read: find the files, symbols and call paths the brief asks about with grep, glob, list_dir and read_file.
Read only the parts that matter. Report facts with file paths and line numbers, quote short snippets where they settle a question,
and say plainly what you could not find.`,
		readOnly: true,
		maxRounds: 25,
		source: "builtin",
	},
	{
		name: "reviewer",
		description: "read-only: reviews a change or a piece of code for bugs, risks and missing tests, and reports them",
		prompt: `Role: reviewer. You only read: examine the code or change the brief names, and the code around it that it depends on.
Report concrete problems first (bugs, broken contracts, missing error handling, missing or weak tests), each with its path,
line and why it matters, then smaller remarks. Do not praise; say "no problems found" when that is the case.`,
		readOnly: true,
		maxRounds: 20,
		source: "builtin",
	},
	{
		name: "executor",
		description: "may write: carries out a well-defined change (edit files, run commands and tests) and reports it",
		prompt: `Role: executor. You carry out the change the brief describes: read what you need, edit the files, and run the project's
checks to confirm the change works. Make no changes the brief does not ask for. Report what you changed (paths), how you
checked it, and anything that still fails.`,
		readOnly: false,
		maxRounds: 50,
		source: "builtin",
	},
];

/** The role delegate_task uses when the call names none. */
export const DEFAULT_ROLE_NAME = "executor";

/** Tools a user-defined agent may list and still count as read-only. */
const READ_ONLY_TOOL_NAMES: ReadonlySet<string> = new Set([...READ_ONLY_CHILD_TOOL_NAMES, "skill_view"]);

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const KNOWN_KEYS = new Set(["name", "description", "tools", "max_rounds"]);

/**
 * The line that goes with a child's brief (in its first user message, never in the system prompt, so children of one
 * role share their prompt prefix whatever their budgets). Pure.
 */
export function budgetLine(maxRounds: number): string {
	return `You have ${maxRounds} tool rounds for this task; when you are done, answer with your report.`;
}

/**
 * Agent definitions from `<cwd>/.snowpea/agents/*.md`, sorted by file name. Each file opens with front matter:
 *
 *     ---
 *     name: docs-writer          (default: the file name without .md)
 *     description: one line      (required)
 *     tools: read_file, grep     (optional; also [a, b] or one "- name" per line)
 *     max_rounds: 15             (optional, 1–200; default 30)
 *     ---
 *     The body is the agent's prompt (required).
 *
 * A definition is read-only when it lists tools and all of them are read-only (read_file, view_image, grep, glob,
 * list_dir, tool_search, skill_view). A file that cannot be used is skipped with one warning naming it and why;
 * unknown keys are warnings too. A missing directory gives nothing. Never throws.
 */
export function loadAgentDefinitions(cwd: string): { definitions: RoleDefinition[]; warnings: string[] } {
	const directory = join(cwd, ".snowpea", "agents");
	let entries: Dirent[];
	try {
		entries = readdirSync(directory, { withFileTypes: true });
	} catch {
		return { definitions: [], warnings: [] };
	}
	const definitions: RoleDefinition[] = [];
	const warnings: string[] = [];
	const files = entries
		.filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
		.map((entry) => entry.name)
		.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
	for (const file of files) {
		const path = join(directory, file);
		let text: string;
		try {
			text = readFileSync(path, "utf8");
		} catch (error) {
			warnings.push(`${path}: cannot read (${error instanceof Error ? error.message : String(error)}); skipped`);
			continue;
		}
		const parsed = parseAgentDefinition(text, basename(file, ".md"), path);
		if ("error" in parsed) {
			warnings.push(`${path}: ${parsed.error}; skipped`);
			continue;
		}
		if (definitions.some((definition) => definition.name === parsed.definition.name)) {
			warnings.push(`${path}: another file already defines agent "${parsed.definition.name}"; skipped`);
			continue;
		}
		warnings.push(...parsed.warnings.map((warning) => `${path}: ${warning}`));
		definitions.push(parsed.definition);
	}
	return { definitions, warnings };
}

/**
 * One agent definition file's text as a RoleDefinition, or why it cannot be used. `fallbackName` names it when the
 * front matter does not; `source` is recorded as its source. Pure.
 */
export function parseAgentDefinition(
	text: string,
	fallbackName: string,
	source: string,
): { definition: RoleDefinition; warnings: string[] } | { error: string } {
	const front = splitFrontMatter(text);
	if (!front) return { error: "no front matter (the file must open with a --- line and close it with another)" };
	const warnings = [...front.fields.keys()]
		.filter((key) => !KNOWN_KEYS.has(key))
		.map((key) => `unknown key "${key}" (ignored)`);
	const name = scalar(front.fields.get("name")) || fallbackName;
	if (!NAME.test(name)) return { error: `name "${name}" must be letters, digits, "_" and "-" (up to 64)` };
	const description = scalar(front.fields.get("description"));
	if (description === "") return { error: "description is missing (the delegating agent picks a role by it)" };
	if (front.body === "") return { error: "the body (the agent's prompt) is empty" };
	let maxRounds = 30;
	const rounds = scalar(front.fields.get("max_rounds"));
	if (rounds !== "") {
		maxRounds = Number(rounds);
		if (!Number.isInteger(maxRounds) || maxRounds < 1 || maxRounds > MAX_CHILD_ROUNDS) {
			return { error: `max_rounds must be a whole number from 1 to ${MAX_CHILD_ROUNDS}, got "${rounds}"` };
		}
	}
	const listed = front.fields.get("tools");
	const tools = listed === undefined ? undefined : list(listed);
	if (tools !== undefined && tools.length === 0) return { error: "tools is empty (leave it out to allow every tool)" };
	return {
		definition: {
			name,
			description,
			prompt: front.body,
			readOnly: tools?.every((tool) => READ_ONLY_TOOL_NAMES.has(tool)) ?? false,
			maxRounds,
			...(tools !== undefined ? { tools } : {}),
			source,
		},
		warnings,
	};
}

/**
 * The roles a session can delegate to: the built-in ones, each replaced by a project definition of the same name,
 * then the other project definitions in their order. Pure.
 */
export function mergeRoles(definitions: readonly RoleDefinition[]): RoleDefinition[] {
	const byName = new Map(definitions.map((definition) => [definition.name, definition]));
	const builtins = BUILTIN_ROLES.map((role) => byName.get(role.name) ?? role);
	const builtinNames = new Set(BUILTIN_ROLES.map((role) => role.name));
	return [...builtins, ...definitions.filter((definition) => !builtinNames.has(definition.name))];
}

function scalar(value: FieldValue | undefined): string {
	return value === undefined ? "" : value.scalar.trim();
}

/** A list written as "a, b", "[a, b]" or "- a" lines; duplicates and empty items dropped. */
function list(value: FieldValue): string[] {
	const inline = value.scalar.replace(/^\[/, "").replace(/\]$/, "");
	const items = [...inline.split(","), ...value.items].map((item) => unquote(item.trim())).filter(Boolean);
	return [...new Set(items)];
}
