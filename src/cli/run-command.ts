import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TurnStopReason } from "../agent/events.js";
import { userText } from "../agent/loop.js";
import { DEFAULT_PERMISSION_MODE, isPermissionMode, PERMISSION_MODES } from "../agent/permissions.js";
import { DetailedLog } from "../session/detailed-log.js";
import { runSessionTurn } from "../session/runner.js";
import { SessionStore } from "../session/store.js";
import { assembleSession, providerFor } from "./assemble.js";
import { ApprovalGate } from "./chat/approval.js";
import { type Output, textRenderer } from "./render.js";
import { loadSettings, SettingsError, snowpeaHome } from "./settings.js";
import { UsageError } from "./usage-error.js";

export interface RunFlags {
	model?: string;
	cwd?: string;
	session?: string;
	json?: boolean;
	maxRounds?: string;
	/** Permission mode: plan, accept (default) or auto; calls that would need approval are refused headless. */
	mode?: string;
}

/** Exit codes of `snowpea run`. */
export const EXIT = { done: 0, stopped: 1, usage: 2, provider: 3, interrupted: 130 } as const;

/** Runs one headless task and returns the process exit code. */
export async function runCommand(prompt: string, flags: RunFlags, output: Output): Promise<number> {
	const cwd = resolve(flags.cwd ?? process.cwd());
	if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`);
	if (prompt.trim() === "") throw new UsageError('no prompt given: snowpea run "<what to do>"');
	const { settings, warnings } = loadOrExplain(cwd);
	for (const warning of warnings) output.log(`warning: ${warning}\n`);

	const maxToolRounds = flags.maxRounds === undefined ? settings.agent.maxToolRounds : Number(flags.maxRounds);
	if (!Number.isInteger(maxToolRounds) || maxToolRounds < 1) {
		throw new UsageError(`--max-rounds must be a whole number of at least 1, got "${flags.maxRounds}"`);
	}
	const mode = flags.mode ?? DEFAULT_PERMISSION_MODE;
	if (!isPermissionMode(mode)) throw new UsageError(`--mode must be ${PERMISSION_MODES.join(", ")}, got "${mode}"`);
	const modelId = flags.model ?? settings.model;
	providerFor(modelId, settings); // a bad model id is a usage error before anything is stored

	const home = snowpeaHome();
	const store = SessionStore.open(join(home, "state.db"));
	try {
		const existing = flags.session ? findSession(store, flags.session) : undefined;
		const session = existing ?? store.createSession({ cwd, model: modelId });
		const controller = new AbortController();
		const stop = () => controller.abort();
		process.once("SIGINT", stop);
		process.once("SIGTERM", stop);
		const assembled = await assembleSession({
			store,
			session,
			settings,
			modelId,
			cwd,
			home,
			permissionMode: () => mode,
		});
		for (const warning of assembled.warnings) output.log(`warning: ${warning}\n`);
		const log = settings.log.detailedPath
			? DetailedLog.open(resolve(cwd, settings.log.detailedPath), session.id)
			: undefined;
		const render = flags.json ? (event: object) => output.out(`${JSON.stringify(event)}\n`) : textRenderer(output);
		let stopReason: TurnStopReason = "error";
		let round = 0;
		const gate = new ApprovalGate({
			mode: () => mode,
			cwd,
			record: (body) => store.appendDecision(session.id, { round, kind: "approval", body }),
		});
		try {
			for await (const event of runSessionTurn({
				store,
				session,
				resumed: existing !== undefined,
				log,
				...assembled.turnOptions(),
				approve: gate.approve,
				input: userText(prompt),
				maxToolRounds,
				signal: controller.signal,
			})) {
				if (event.type === "context") round = event.report.round;
				render(event);
				if (event.type === "turn.done") stopReason = event.stopReason;
			}
		} finally {
			process.off("SIGINT", stop);
			process.off("SIGTERM", stop);
			await assembled.close();
		}
		if (!flags.json) output.log(`session ${session.id}\n`);
		return exitCodeFor(stopReason);
	} finally {
		store.close();
	}
}

export function exitCodeFor(stopReason: TurnStopReason): number {
	if (stopReason === "done") return EXIT.done;
	if (stopReason === "aborted") return EXIT.interrupted;
	if (stopReason === "error") return EXIT.provider;
	return EXIT.stopped;
}

export function loadOrExplain(cwd: string): ReturnType<typeof loadSettings> {
	try {
		return loadSettings(cwd);
	} catch (error) {
		if (error instanceof SettingsError) throw new UsageError(error.message);
		throw error;
	}
}

export function findSession(store: SessionStore, id: string) {
	let session: ReturnType<SessionStore["getSession"]>;
	try {
		session = store.getSession(id);
	} catch (error) {
		throw new UsageError((error as Error).message);
	}
	if (!session) throw new UsageError(`no session "${id}"; list them with: snowpea sessions list`);
	return session;
}
