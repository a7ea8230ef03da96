#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { benchCommand } from "./bench-command.js";
import { chatCommand, processTerminal } from "./chat/chat-session.js";
import { closeMatches } from "./chat/slash-commands.js";
import type { Output } from "./render.js";
import { EXIT, runCommand } from "./run-command.js";
import { compactSession, exportSession, listSessions, showSession } from "./sessions-command.js";
import { listTools } from "./tools-command.js";
import { UsageError } from "./usage-error.js";

const output: Output = {
	out: (text) => process.stdout.write(text),
	log: (text) => process.stderr.write(text),
};

function version(): string {
	const file = new URL("../../package.json", import.meta.url);
	return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** Builds the command tree; each action sets the exit code it wants. */
function program(setExit: (code: number) => void): Command {
	const root = new Command("snowpea")
		.description("A coding agent that controls what every model round costs.")
		.version(version(), "-v, --version")
		.exitOverride()
		.configureOutput({ writeErr: (text) => output.log(text), writeOut: (text) => output.out(text) })
		// root options only before a command, so `snowpea run --model …` stays the run command's
		.enablePositionalOptions()
		.option("--resume [id]", "continue a stored session interactively (default: the latest in this directory)")
		.option("-m, --model <provider:model>", "model for the interactive session")
		.option("--cwd <dir>", "working directory (default: the current one)")
		.option("--mode <mode>", "permissions: plan, accept (default: ask before shell, network, outside writes) or auto")
		.argument("[command...]")
		.usage("[options] [command]")
		.action(
			async (words: string[], flags: { resume?: string | boolean; model?: string; cwd?: string; mode?: string }) => {
				if (words.length > 0) {
					const names = root.commands.map((command) => command.name());
					const close = closeMatches(words[0] as string, names);
					const hint = close.length > 0 ? `did you mean ${close.join(" or ")}? ` : "";
					throw new UsageError(`unknown command "${words[0]}"; ${hint}see snowpea --help`);
				}
				setExit(await chatCommand(flags, processTerminal(), version()));
			},
		);

	root
		.command("run")
		.description("run one task headless: the answer on stdout, a compact tool log on stderr")
		.argument("[prompt...]", "what to do")
		.option("-m, --model <provider:model>", "model, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5")
		.option("--cwd <dir>", "working directory (default: the current one)")
		.option("-s, --session <id>", "continue a stored session")
		.option("--json", "print one JSON event per line instead of text")
		.option("--max-rounds <n>", "stop after this many model rounds (default agent.maxToolRounds, 500)")
		.option(
			"--mode <mode>",
			"permissions: plan (read-only, notes), accept (default: shell, network and writes outside the working directory are refused) or auto (everything runs)",
		)
		.action(async (words: string[], flags) => {
			setExit(await runCommand(words.join(" "), flags, output));
		});

	const sessions = root.command("sessions").description("list, show, export and compact stored sessions");
	sessions
		.command("list")
		.option("--json", "print JSON")
		.action((flags) => listSessions(flags, output));
	sessions
		.command("show")
		.argument("<id>", "session id or a unique prefix")
		.action((id: string) => showSession(id, output));
	sessions
		.command("export")
		.argument("<id>", "session id or a unique prefix")
		.option("--format <format>", "jsonl or md", "jsonl")
		.action((id: string, flags: { format: string }) => exportSession(id, flags.format, output));
	sessions
		.command("compact")
		.description("fold the session's older conversation into a summary now (its next turn starts from it)")
		.argument("<id>", "session id or a unique prefix")
		.action(async (id: string) => {
			setExit(await compactSession(id, output));
		});

	root
		.command("bench")
		.description("replay recorded agent runs under each context policy and price them (offline, no API key)")
		.argument("[paths...]", "trajectory files or directories of *.jsonl (default: the bundled corpus)")
		.option("--policy <names>", "comma-separated policies to compare (off and oracle are always shown)")
		.option("--prices <sheet>", "price sheet: anthropic, openai or deepseek", "anthropic")
		.option("--window <tokens>", "context window in tokens, for the ratio policy", "200000")
		.option("--json", "print the report as JSON")
		.option("--html <file>", "also write a self-contained page with per-round charts")
		.action((paths: string[], flags) => {
			setExit(benchCommand(paths, flags, output));
		});

	const tools = root.command("tools").description("inspect the tools the model can use");
	tools
		.command("list")
		.option("--json", "print JSON: [{name, permission, description, deferred, source}]")
		.option("--cwd <dir>", "project directory (default: the current one)")
		.action(async (flags: { json?: boolean; cwd?: string }) => {
			await listTools(flags, output);
		});
	return root;
}

async function main(): Promise<void> {
	let code: number = EXIT.done;
	try {
		await program((value) => {
			code = value;
		}).parseAsync(process.argv);
	} catch (error) {
		if (error instanceof CommanderError) {
			code = error.exitCode === 0 ? EXIT.done : EXIT.usage;
		} else if (error instanceof UsageError) {
			output.log(`snowpea: ${error.message}\n`);
			code = EXIT.usage;
		} else {
			output.log(`snowpea: ${error instanceof Error ? error.message : String(error)}\n`);
			code = EXIT.stopped;
		}
	}
	process.exitCode = code;
}

await main();
