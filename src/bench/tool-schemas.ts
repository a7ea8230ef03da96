import type { ToolDefinition } from "../llm/types.js";

// The recorded trajectories carry no tool schemas, but every real request does, ahead of the system prompt. The bench
// puts this fixed block of eleven typical coding-agent tools (about 2.1K o200k tokens) at the start of every request, so
// that request sizes and the cached prefix are realistic. Changing it changes every figure the bench prints.

const path = { type: "string", description: "File path, absolute or relative to the working directory." };

/** Eleven coding-agent tools as a model would be offered them. */
export const BENCH_TOOL_DEFINITIONS: readonly ToolDefinition[] = [
	{
		name: "read_file",
		description:
			"Read a text file and return its lines prefixed with line numbers (`N\\t<line>`). Reads the whole file when it " +
			"is small; otherwise pass `offset` and `limit` to page through it. Binary files are refused with their size and " +
			"detected type; images are returned as image attachments. Use this instead of `cat`, `head` or `tail` in the " +
			"shell: the output is capped and paged consistently, and re-reading an unchanged file returns a short stub.\n\n" +
			"Lines longer than 2000 characters are cut with a marker. When the output is paged, the last line says which " +
			"line to continue from and how many lines the file has. Reading a directory returns an error naming " +
			"`list_dir`. Read every file you intend to edit before editing it, and read related files together in one " +
			"round when you already know you need them.",
		parameters: {
			type: "object",
			properties: {
				path,
				offset: { type: "integer", minimum: 1, description: "First line to return (1-based). Default 1." },
				limit: { type: "integer", minimum: 1, description: "Maximum number of lines to return. Default 2000." },
			},
			required: ["path"],
			additionalProperties: false,
		},
	},
	{
		name: "write_file",
		description:
			"Create a file or replace its entire content. Parent directories are created as needed. Prefer `edit_file` for " +
			"changes to an existing file: it is cheaper and cannot silently drop content you did not mean to touch. The " +
			"result states the number of bytes and lines written.",
		parameters: {
			type: "object",
			properties: {
				path,
				content: { type: "string", description: "The complete new content of the file." },
			},
			required: ["path", "content"],
			additionalProperties: false,
		},
	},
	{
		name: "edit_file",
		description:
			"Replace an exact piece of text in a file. `old_string` must occur exactly once unless `replace_all` is true; " +
			"include enough surrounding lines to make it unique. Whitespace and indentation must match the file byte for " +
			"byte. The result shows the edited region with line numbers so you can check the change without re-reading.\n\n" +
			"The line-number prefix that `read_file` adds is not part of the file: never include it in `old_string` or " +
			"`new_string`. An edit fails, and changes nothing, when the file changed on disk since you last read it, when " +
			"`old_string` is not found, or when it is found more than once without `replace_all`; the error says which.",
		parameters: {
			type: "object",
			properties: {
				path,
				old_string: { type: "string", description: "The text to replace, copied exactly from the file." },
				new_string: { type: "string", description: "The replacement text; must differ from old_string." },
				replace_all: {
					type: "boolean",
					description: "Replace every occurrence instead of exactly one. Default false.",
				},
			},
			required: ["path", "old_string", "new_string"],
			additionalProperties: false,
		},
	},
	{
		name: "shell",
		description:
			"Run a command with bash in the working directory and return its combined stdout and stderr followed by the exit " +
			"code. Each call starts a fresh shell: `cd` and exported variables do not carry over, so chain commands with " +
			"`&&`. Output longer than the cap keeps its head and tail with a marker in between. Commands that wait for input " +
			"fail; pass flags such as `--yes` or pipe input explicitly. Long-running servers should be started in the " +
			"background with their output redirected to a file.\n\n" +
			"Guidelines: quote paths that contain spaces. Prefer the dedicated tools over shell equivalents: `read_file` " +
			"instead of `cat`, `grep` instead of `grep -r` or `rg`, `glob` instead of `find -name`, `edit_file` instead of " +
			"`sed -i`. Run tests and builds with the narrowest target that answers your question, and read the failure " +
			"before re-running. Never run commands that need a terminal (editors, pagers, interactive rebases); set " +
			"`GIT_PAGER=cat` or pass `--no-pager` where a pager might start. Do not push, force-push, delete branches or " +
			"rewrite published history unless the task asks for it. When a command fails, say what you expected and what " +
			"happened before trying something else; do not retry the same command unchanged.",
		parameters: {
			type: "object",
			properties: {
				command: { type: "string", description: "The command line to run." },
				timeout_seconds: {
					type: "integer",
					minimum: 1,
					maximum: 1800,
					description: "Kill the command after this many seconds. Default 120.",
				},
				description: { type: "string", description: "Five to ten words saying what the command is for." },
			},
			required: ["command"],
			additionalProperties: false,
		},
	},
	{
		name: "grep",
		description:
			"Search file contents with a regular expression (ripgrep syntax). Respects .gitignore and skips binary files. " +
			"Returns matching lines as `path:line:text`, or only the matching paths with `files_only`. Results are sorted by " +
			"path and capped; narrow the search with `path` or `glob` when the cap is reached.",
		parameters: {
			type: "object",
			properties: {
				pattern: { type: "string", description: "Regular expression to search for." },
				path: { type: "string", description: "File or directory to search. Default: the working directory." },
				glob: { type: "string", description: 'Only search files whose path matches this glob, e.g. "**/*.ts".' },
				ignore_case: { type: "boolean", description: "Match case-insensitively. Default false." },
				context_lines: { type: "integer", minimum: 0, maximum: 20, description: "Lines of context around each match." },
				files_only: { type: "boolean", description: "Return only the paths of matching files. Default false." },
			},
			required: ["pattern"],
			additionalProperties: false,
		},
	},
	{
		name: "glob",
		description:
			"Find files by name with a glob pattern such as `src/**/*.test.ts`. Respects .gitignore. Returns paths relative " +
			"to the working directory, newest first, capped at 500; use a narrower pattern when the cap is reached.",
		parameters: {
			type: "object",
			properties: {
				pattern: { type: "string", description: "Glob pattern; `**` matches any number of directories." },
				path: { type: "string", description: "Directory to search from. Default: the working directory." },
			},
			required: ["pattern"],
			additionalProperties: false,
		},
	},
	{
		name: "list_dir",
		description:
			"List a directory as an indented tree, directories first, with file sizes. Hidden entries and .gitignored paths " +
			"are left out unless asked for. Large directories are summarized by count past the cap.",
		parameters: {
			type: "object",
			properties: {
				path,
				depth: { type: "integer", minimum: 1, maximum: 5, description: "How many levels to descend. Default 2." },
				include_hidden: { type: "boolean", description: "Include dotfiles and ignored paths. Default false." },
			},
			required: ["path"],
			additionalProperties: false,
		},
	},
	{
		name: "apply_patch",
		description:
			"Apply a unified diff to one or more files in a single step, for changes that touch several places at once. " +
			"Each hunk must match the current file content exactly, including context lines; a patch that does not apply " +
			"changes nothing and reports the first hunk that failed, with the lines the file actually has there. New files " +
			"use `--- /dev/null`; deleted files use `+++ /dev/null`. The result lists every file changed with the number " +
			"of lines added and removed.",
		parameters: {
			type: "object",
			properties: {
				patch: { type: "string", description: "The unified diff, with `---`/`+++` headers and `@@` hunks." },
				dry_run: { type: "boolean", description: "Check that the patch applies without writing. Default false." },
			},
			required: ["patch"],
			additionalProperties: false,
		},
	},
	{
		name: "web_fetch",
		description:
			"Fetch a URL over HTTPS and return its main text converted to Markdown (scripts, navigation and styling " +
			"removed). Only public pages: requests to private addresses are refused. Long pages are cut at `max_chars` " +
			"with a note saying how much was left out.",
		parameters: {
			type: "object",
			properties: {
				url: { type: "string", description: "The absolute https:// URL to fetch." },
				max_chars: {
					type: "integer",
					minimum: 1000,
					maximum: 100000,
					description: "Most characters of page text to return. Default 50000.",
				},
			},
			required: ["url"],
			additionalProperties: false,
		},
	},
	{
		name: "todo_write",
		description:
			"Replace the task list you keep for this session. Use it for work with three or more steps: write the list " +
			"first, mark exactly one item in_progress while you work on it, and mark items completed as soon as they are " +
			"done. The list is shown back to you each round; keep item texts short and concrete.",
		parameters: {
			type: "object",
			properties: {
				todos: {
					type: "array",
					items: {
						type: "object",
						properties: {
							content: { type: "string", description: "What to do, in the imperative." },
							status: { type: "string", enum: ["pending", "in_progress", "completed"] },
						},
						required: ["content", "status"],
						additionalProperties: false,
					},
				},
			},
			required: ["todos"],
			additionalProperties: false,
		},
	},
	{
		name: "ask_user",
		description:
			"Ask the person you work for a question and wait for the answer. Only for decisions you cannot make from the " +
			"code, the task or the documentation: an ambiguous requirement, a destructive step, a missing credential. Offer " +
			"two to four concrete options when you can; the person may also answer in free text.",
		parameters: {
			type: "object",
			properties: {
				question: { type: "string", description: "One clear question, ending with a question mark." },
				options: {
					type: "array",
					items: { type: "string" },
					maxItems: 4,
					description: "Suggested answers, shortest first.",
				},
			},
			required: ["question"],
			additionalProperties: false,
		},
	},
];

/** The tool schemas as one request segment: the JSON text the cache sees first in every request. */
export const TOOL_SCHEMAS: string = JSON.stringify(BENCH_TOOL_DEFINITIONS);
