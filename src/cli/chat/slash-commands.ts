// The interactive session's slash commands as data, and how a typed line becomes a prompt or a command. Pure.

import { editDistance } from "../../llm/text.js";

export interface SlashCommandSpec {
	name: string;
	/** How to type it, e.g. "/mode plan|accept|auto". */
	usage: string;
	/** One line for /help. */
	summary: string;
}

export const SLASH_COMMANDS: readonly SlashCommandSpec[] = [
	{ name: "help", usage: "/help", summary: "list the commands and keys" },
	{ name: "tools", usage: "/tools", summary: "the tools the model has: eager, loaded and deferred groups" },
	{ name: "attach", usage: "/attach <path>", summary: "attach a file or image to your next prompt (same as @path)" },
	{ name: "expand", usage: "/expand [N]", summary: "show the full output of tool call N (default: the last one)" },
	{ name: "compact", usage: "/compact", summary: "summarize the conversation so far to free context" },
	{ name: "cost", usage: "/cost", summary: "tokens and cost of every request of this session" },
	{ name: "context", usage: "/context", summary: "what the next request will contain, by part, in tokens" },
	{
		name: "model",
		usage: "/model <provider:model>",
		summary: "switch the model, e.g. /model anthropic:claude-sonnet-4-5",
	},
	{
		name: "mode",
		usage: "/mode plan|accept|auto",
		summary: "permissions: plan (read, notes), accept (ask), auto (all)",
	},
	{ name: "sessions", usage: "/sessions", summary: "recent sessions" },
	{ name: "resume", usage: "/resume <id>", summary: "continue a stored session (an id or a unique prefix)" },
	{ name: "new", usage: "/new", summary: "start a new session" },
	{ name: "quit", usage: "/quit", summary: "leave (the session stays resumable: snowpea --resume)" },
];

/** Other names a command answers to. */
const ALIASES: Readonly<Record<string, string>> = { exit: "quit", q: "quit", "?": "help" };

/** A typed entry, classified. */
export type ParsedInput =
	| { kind: "empty" }
	| { kind: "prompt"; text: string }
	| { kind: "command"; name: string; args: string }
	| { kind: "unknown"; name: string; suggestions: string[] };

/**
 * Classifies one entry. "/name args" is a command when name is a word (letters, digits, "-", or "?"); anything else
 * — including "/usr/bin/env is missing" — is a prompt. A leading "//" sends the rest, starting with "/", as a prompt.
 * Unknown names come with their close matches.
 */
export function parseInput(text: string): ParsedInput {
	const trimmed = text.trim();
	if (trimmed === "") return { kind: "empty" };
	if (trimmed.startsWith("//")) return { kind: "prompt", text: trimmed.slice(1) };
	const match = /^\/([A-Za-z][\w-]*|\?)(?:\s+([\s\S]*))?$/.exec(trimmed);
	if (!match) return { kind: "prompt", text };
	const typed = (match[1] as string).toLowerCase();
	const args = (match[2] ?? "").trim();
	const name = ALIASES[typed] ?? typed;
	if (SLASH_COMMANDS.some((command) => command.name === name)) return { kind: "command", name, args };
	return {
		kind: "unknown",
		name: typed,
		suggestions: closeMatches(
			typed,
			SLASH_COMMANDS.map((command) => command.name),
		),
	};
}

/** "unknown command /cots — did you mean /cost?" (or a pointer to /help when nothing is close). */
export function unknownCommandMessage(name: string, suggestions: readonly string[]): string {
	if (suggestions.length === 0) return `unknown command /${name}; /help lists the commands`;
	const listed = suggestions.map((suggestion) => `/${suggestion}`);
	const choices = listed.length === 1 ? listed[0] : `${listed.slice(0, -1).join(", ")} or ${listed.at(-1)}`;
	return `unknown command /${name} — did you mean ${choices}?`;
}

/**
 * The candidates close to `word`: those it is a prefix of, and those within edit distance 2 (1 for words of up to
 * three letters), nearest first, then alphabetically. Case-insensitive.
 */
export function closeMatches(word: string, candidates: readonly string[]): string[] {
	const typed = word.toLowerCase();
	const limit = typed.length <= 3 ? 1 : 2;
	return candidates
		.map((candidate) => {
			const lower = candidate.toLowerCase();
			const distance = lower.startsWith(typed) ? 0 : editDistance(typed, lower);
			return { candidate, distance };
		})
		.filter(({ distance }) => distance <= limit)
		.sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
		.map(({ candidate }) => candidate);
}

/** The /help text: one line per command, then the keys. */
export function helpText(): string {
	const width = Math.max(...SLASH_COMMANDS.map((command) => command.usage.length));
	const lines = SLASH_COMMANDS.map((command) => `  ${command.usage.padEnd(width)}  ${command.summary}`);
	return [
		"commands:",
		...lines,
		"keys and input:",
		"  Enter            send",
		"  \\ at line end    continue on the next line (Alt-Enter too)",
		"  Up / Down        prompt history",
		"  @path            inline a file with line numbers, or attach an image",
		"  Ctrl-C           stop the current turn; twice (or Ctrl-D on an empty line) to leave",
		"  //text           send a prompt that starts with /",
	].join("\n");
}
