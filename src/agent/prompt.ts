import type { SystemSegment } from "../llm/types.js";

export interface PromptInput {
	cwd: string;
	/** YYYY-MM-DD; goes in the volatile tier, last, so a new day never disturbs the cached prefix before it. */
	date: string;
	platform: string;
	/** The toolset's one-line summary of deferred groups, when anything is deferred. */
	deferredLine?: string;
	/** The project's instruction files, rendered (context-files.ts). */
	projectInstructions?: string;
	/** The skills index (skills.ts). */
	skillsIndex?: string;
	/**
	 * A child agent's role text (its preamble, role and definition prompts): appended to the stable tier, so children
	 * of one role share one cached prefix. Never per-child text: a child's brief and budget go in its first message.
	 */
	role?: string;
}

const IDENTITY = `You are snowpea, a coding agent working in a user's project from the terminal.
You act through tools: read and search before you change anything, make focused edits, and run the project's own
checks (tests, builds, linters) to confirm a change works. Prefer small verified steps over large guesses.`;

const RULES = `Rules:
- Paths are relative to the working directory unless absolute.
- Read a file before editing it; edit_file needs the exact text to replace.
- Tool output may be capped: a note then says where the full text is and how to read it.
- Do not repeat a call whose result you already have; use what earlier results told you.
- When the task is done, answer with a short summary of what you changed and how you checked it.`;

/**
 * The system prompt in tiers: stable (identity, rules, a child's role) → context (working directory, project
 * instructions, skills index, deferred tool groups) → volatile (date).
 * Pure: the same input gives the same bytes.
 */
export function systemPrompt(input: PromptInput): SystemSegment[] {
	return [
		{ tier: "stable", text: input.role ? `${IDENTITY}\n\n${RULES}\n\n${input.role}` : `${IDENTITY}\n\n${RULES}` },
		{
			tier: "context",
			text: [
				`Working directory: ${input.cwd}\nPlatform: ${input.platform}`,
				input.projectInstructions,
				input.skillsIndex,
				input.deferredLine,
			]
				.filter((part): part is string => Boolean(part))
				.join("\n\n"),
		},
		{ tier: "volatile", text: `Today's date: ${input.date}` },
	];
}
