// Runs the built CLI (dist/cli/main.js) as a child process, the way a user does.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { FakeProvider } from "./fake-provider.js";

export const CLI = resolve(import.meta.dirname, "../../dist/cli/main.js");

/** True when `npm run build` has produced the CLI (npm test always builds first). */
export const cliBuilt = existsSync(CLI);

export interface CliResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

/** A fresh temp directory. */
export function tempDir(prefix = "snowpea-e2e-"): string {
	return mkdtempSync(join(tmpdir(), prefix));
}

/** The environment of a CLI run: its own SNOWPEA_HOME, providers pointed at the fake, no real keys. */
export function cliEnv(home: string, fake?: FakeProvider, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const environment: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (!/^(OPENAI|ANTHROPIC|SNOWPEA|CONTEXT|DETAILED)_/.test(key)) environment[key] = value;
	}
	return {
		...environment,
		SNOWPEA_HOME: home,
		OPENAI_API_KEY: "test-key",
		ANTHROPIC_API_KEY: "test-key",
		...(fake ? { OPENAI_BASE_URL: fake.openaiBaseURL, ANTHROPIC_BASE_URL: fake.anthropicBaseURL } : {}),
		...extra,
	};
}

export function spawnCli(
	args: string[],
	options: { env: NodeJS.ProcessEnv; cwd: string },
): ChildProcess & { result: Promise<CliResult> } {
	const child = spawn(process.execPath, [CLI, ...args], {
		env: options.env,
		cwd: options.cwd,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let stdout = "";
	let stderr = "";
	child.stdout?.on("data", (chunk: Buffer) => {
		stdout += chunk.toString();
	});
	child.stderr?.on("data", (chunk: Buffer) => {
		stderr += chunk.toString();
	});
	const result = new Promise<CliResult>((resolvePromise) => {
		child.on("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
	});
	return Object.assign(child, { result });
}

export function runCli(args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<CliResult> {
	return spawnCli(args, options).result;
}

/** Polls until `check` is true (or throws after `timeoutMs`). */
export async function waitFor(check: () => boolean, timeoutMs = 15_000, what = "condition"): Promise<void> {
	const started = Date.now();
	while (!check()) {
		if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolvePromise) => setTimeout(resolvePromise, 25));
	}
}
