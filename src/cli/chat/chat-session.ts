import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AgentEvent } from "../../agent/events.js";
import { DEFAULT_MAX_IMAGES_PER_REQUEST, resolveImages } from "../../agent/images.js";
import { measureSystem, measureTools } from "../../agent/measure.js";
import {
	DEFAULT_PERMISSION_MODE,
	isPermissionMode,
	PERMISSION_MODES,
	type PermissionMode,
} from "../../agent/permissions.js";
import { priceSheetFor } from "../../context/cost.js";
import type { ContentPart, Usage } from "../../llm/types.js";
import { DetailedLog } from "../../session/detailed-log.js";
import { loadSessionState, runSessionTurn } from "../../session/runner.js";
import { type SessionInfo, SessionStore } from "../../session/store.js";
import { type AssembledSession, assembleSession, providerFor } from "../assemble.js";
import { findSession, loadOrExplain } from "../run-command.js";
import type { Settings } from "../settings.js";
import { snowpeaHome } from "../settings.js";
import { UsageError } from "../usage-error.js";
import { type ApprovalAnswer, ApprovalGate, type ApprovalRequest, sessionApprovals } from "./approval.js";
import { attachFile, expandAtPaths } from "./at-paths.js";
import { runChatCommand } from "./chat-commands.js";
import { ansiStyle, ChatRenderer, type Style } from "./chat-renderer.js";
import { costRows, costTotal } from "./cost-table.js";
import { LineEditor } from "./line-editor.js";
import { parseInput, unknownCommandMessage } from "./slash-commands.js";
import { statusLine } from "./status-line.js";

export interface ChatFlags {
	/** true: the latest session in the working directory; a string: that session (id or unique prefix). */
	resume?: string | boolean;
	model?: string;
	cwd?: string;
	mode?: string;
}

/** Where the session reads keys and writes the screen. */
export interface ChatTerminal {
	input: NodeJS.ReadableStream;
	output: NodeJS.WritableStream;
	/** Raw keys, editing, history. */
	terminal: boolean;
	color: boolean;
	columns: () => number;
}

/** The prompt shown for a new entry. */
export const PROMPT = "› ";

/** The open session: what turns and commands work on. Replaced by /new, /resume and /model. */
export interface OpenSession {
	info: SessionInfo;
	/** False until the first prompt: a session nobody wrote to is never stored. */
	stored: boolean;
	/** True when it had messages before this process opened it. */
	resumed: boolean;
	assembled: AssembledSession;
	gate: ApprovalGate;
	renderer: ChatRenderer;
	cwd: string;
	/** The round of the latest request (approval decisions are recorded under it). */
	round: number;
	lastUsage?: Usage;
}

/**
 * `snowpea` with no command: the interactive session. Returns the process exit code.
 * Contract: usage problems (a bad flag, an unknown session) throw UsageError before the screen starts; afterwards
 * nothing throws — errors are shown as lines and the session goes on. Every turn is stored as it runs, so the
 * session can be resumed at any point (snowpea --resume).
 */
export async function chatCommand(flags: ChatFlags, terminal: ChatTerminal, version: string): Promise<number> {
	const cwd = resolve(flags.cwd ?? process.cwd());
	if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new UsageError(`--cwd ${cwd} is not a directory`);
	const mode = flags.mode ?? DEFAULT_PERMISSION_MODE;
	if (!isPermissionMode(mode)) throw new UsageError(`--mode must be ${PERMISSION_MODES.join(", ")}, got "${mode}"`);
	const { settings, warnings } = loadOrExplain(cwd);
	if (flags.model) providerFor(flags.model, settings);
	const home = snowpeaHome();
	const store = SessionStore.open(join(home, "state.db"));
	try {
		let resumeFrom: SessionInfo | undefined;
		let notice: string | undefined;
		if (typeof flags.resume === "string") resumeFrom = findSession(store, flags.resume);
		else if (flags.resume === true) {
			resumeFrom = store.latestSession({ cwd, parentId: null });
			if (!resumeFrom) notice = `no session to resume in ${cwd}; starting a new one`;
		}
		const chat = new ChatSession({ store, settings, home, cwd, mode, terminal, version, modelFlag: flags.model });
		for (const warning of warnings) chat.write(chat.style.yellow(`warning: ${warning}\n`));
		if (notice) chat.write(`${notice}\n`);
		return await chat.run(resumeFrom);
	} finally {
		store.close();
	}
}

/** One interactive session process: the screen, the prompt, the open session and the commands. */
export class ChatSession {
	readonly store: SessionStore;
	readonly settings: Settings;
	readonly home: string;
	readonly style: Style;
	readonly editor: LineEditor;
	mode: PermissionMode;
	/** Parts /attach collected for the next prompt. */
	pending: ContentPart[] = [];
	private current: OpenSession | undefined;
	private turn: AbortController | undefined;
	private interruptArmed = false;
	private readonly cwd: string;
	private readonly terminal: ChatTerminal;
	private readonly version: string;
	private readonly modelFlag: string | undefined;

	constructor(options: {
		store: SessionStore;
		settings: Settings;
		home: string;
		cwd: string;
		mode: PermissionMode;
		terminal: ChatTerminal;
		version: string;
		modelFlag?: string;
	}) {
		this.store = options.store;
		this.settings = options.settings;
		this.home = options.home;
		this.cwd = options.cwd;
		this.mode = options.mode;
		this.terminal = options.terminal;
		this.version = options.version;
		this.modelFlag = options.modelFlag;
		this.style = ansiStyle(options.terminal.color);
		this.editor = new LineEditor({
			input: options.terminal.input,
			output: options.terminal.output,
			terminal: options.terminal.terminal,
			historyFile: join(options.home, "history"),
		});
	}

	/** The open session; set once run() has started. */
	get session(): OpenSession {
		if (!this.current) throw new Error("no session is open");
		return this.current;
	}

	write(text: string): void {
		this.terminal.output.write(text);
	}

	/** A line of output, ending any streamed line first. */
	say(text: string): void {
		if (this.current) this.current.renderer.line(text);
		else this.write(`${text}\n`);
	}

	/** Runs the session until /quit, Ctrl-D or a second Ctrl-C; returns the exit code. */
	async run(resumeFrom: SessionInfo | undefined): Promise<number> {
		const interrupt = () => this.interrupt();
		const terminate = () => {
			this.turn?.abort();
			this.editor.close();
		};
		this.editor.onInterrupt(interrupt);
		this.editor.onClose(() => this.turn?.abort());
		process.on("SIGINT", interrupt);
		process.on("SIGTERM", terminate);
		try {
			const opened = await this.tryOpen(resumeFrom, resumeFrom ? (this.modelFlag ?? resumeFrom.model) : undefined);
			if (!opened) return 1;
			this.write(
				`${this.style.bold(`snowpea ${this.version}`)} ${this.style.dim(`· ${this.session.cwd} · /help for commands, Ctrl-D to leave`)}\n`,
			);
			this.describeOpened();
			for (;;) {
				this.write(`${this.style.dim(this.status())}\n`);
				const entry = await this.editor.read(PROMPT);
				if (entry === undefined) break;
				this.interruptArmed = false;
				const parsed = parseInput(entry);
				if (parsed.kind === "empty") continue;
				try {
					if (parsed.kind === "prompt") await this.runPrompt(parsed.text);
					else if (parsed.kind === "unknown") this.say(unknownCommandMessage(parsed.name, parsed.suggestions));
					else if (!(await runChatCommand(this, parsed.name, parsed.args))) break;
				} catch (error) {
					// the store or the file system failed: say so and keep the session going
					this.say(this.style.red(`error: ${error instanceof Error ? error.message : String(error)}`));
				}
				if (this.editor.isClosed) break;
			}
			return 0;
		} finally {
			process.off("SIGINT", interrupt);
			process.off("SIGTERM", terminate);
			this.editor.close();
			await this.current?.assembled.close();
			if (this.current?.stored) {
				this.write(`\nsession ${this.current.info.id} — resume with: snowpea --resume ${this.current.info.id}\n`);
			}
		}
	}

	/**
	 * Opens `from` (a stored session), or a new one when undefined, with `modelId` (default: the session's or the
	 * settings' model), closing the session open before. Shows the problem and returns false when it cannot.
	 */
	async tryOpen(from: SessionInfo | undefined, modelId?: string): Promise<boolean> {
		const model = modelId ?? from?.model ?? this.modelFlag ?? this.settings.model;
		const cwd = from && existsSync(from.cwd) && statSync(from.cwd).isDirectory() ? from.cwd : this.cwd;
		const info: SessionInfo = from ?? {
			id: randomUUID(),
			createdAt: Date.now(),
			updatedAt: Date.now(),
			cwd,
			model,
			title: "",
			status: "active",
			meta: {},
		};
		let assembled: AssembledSession;
		try {
			assembled = await assembleSession({
				permissionMode: () => this.mode,
				store: this.store,
				session: info,
				settings: this.settings,
				modelId: model,
				cwd,
				home: this.home,
			});
		} catch (error) {
			this.say(this.style.red(`error: ${error instanceof Error ? error.message : String(error)}`));
			return false;
		}
		await this.current?.assembled.close();
		for (const warning of assembled.warnings) this.say(this.style.yellow(`warning: ${warning}`));
		const stored = from !== undefined;
		const open: OpenSession = {
			info,
			stored,
			resumed: stored && assembled.state.entries.length > 0,
			assembled,
			cwd,
			round: assembled.state.nextRound - 1,
			renderer: new ChatRenderer((text) => this.write(text), this.style, this.terminal.columns),
			gate: new ApprovalGate({
				mode: () => this.mode,
				cwd,
				ask: (request, signal) => this.askApproval(request, signal),
				record: (body) => {
					const current = this.current;
					if (current?.stored) {
						this.store.appendDecision(current.info.id, { round: current.round, kind: "approval", body });
					}
				},
				alwaysAllowed: stored ? sessionApprovals(this.store.decisions(info.id)) : [],
			}),
		};
		const lastUsage = stored ? this.store.latestEvent(info.id, "usage")?.event : undefined;
		if (lastUsage?.type === "usage") open.lastUsage = lastUsage.usage;
		this.current = open;
		this.pending = [];
		return true;
	}

	/** One line saying what is open: a new session, or a resumed one with its size and last answer. */
	describeOpened(): void {
		const open = this.session;
		if (!open.stored) {
			this.say(this.style.dim(`new session · ${open.assembled.modelId} · mode ${this.mode}`));
			return;
		}
		const entries = open.assembled.state.entries;
		this.say(
			`resumed session ${open.info.id}${open.info.title ? ` "${open.info.title}"` : ""} · ${entries.length} messages · ${open.assembled.modelId}`,
		);
		const last = [...entries]
			.reverse()
			.find((entry) => entry.message.role === "assistant" && entry.message.text !== "");
		if (last?.message.role === "assistant") {
			const lines = last.message.text.trim().split("\n");
			const shown = lines.slice(-6).join("\n");
			this.say(this.style.dim(`${lines.length > 6 ? "…\n" : ""}${shown}`));
		}
	}

	/** The status line: model, context used, cache hits of the last request, session cost, mode. */
	status(): string {
		const open = this.session;
		const usage = open.lastUsage;
		return statusLine({
			modelId: open.assembled.modelId,
			contextTokens: usage ? usage.input + usage.output : undefined,
			contextWindow: open.assembled.model.contextWindow,
			cacheHitShare: usage && usage.input > 0 ? usage.cacheRead / usage.input : undefined,
			costUsd: open.stored ? costTotal(this.costRows()).cost : 0,
			mode: this.mode,
		});
	}

	/** Every recorded request of the open session, priced with its model's sheet. */
	costRows() {
		const open = this.session;
		// the requests of turns, and the summary requests of compactions
		const usages = this.store.events(open.info.id, { types: ["usage", "compaction"] }).flatMap(({ event }) => {
			if (event.type === "usage") return [{ round: event.round, usage: event.usage }];
			if (event.type === "compaction" && event.usage) return [{ round: event.round, usage: event.usage }];
			return [];
		});
		return costRows(usages, priceSheetFor(open.assembled.model, open.assembled.modelId));
	}

	/** Attaches a file to the next prompt (/attach). */
	async attach(path: string): Promise<void> {
		const attached = await attachFile(path, { cwd: this.session.cwd, attachmentDirectory: this.attachmentDirectory() });
		if ("error" in attached) return this.say(this.style.red(attached.error));
		this.pending.push(...attached.parts);
		this.say(`${attached.notice}; it goes with your next prompt`);
	}

	private attachmentDirectory(): string {
		return join(this.home, "sessions", this.session.info.id, "attachments");
	}

	/** Runs one prompt as a turn: @paths expanded, pending attachments added, every event rendered and stored. */
	async runPrompt(text: string): Promise<void> {
		const open = this.session;
		const expanded = await expandAtPaths(text, { cwd: open.cwd, attachmentDirectory: this.attachmentDirectory() });
		for (const notice of expanded.notices) {
			this.say(notice.startsWith("attached") ? this.style.dim(notice) : this.style.yellow(notice));
		}
		const content = [...expanded.content, ...this.pending];
		this.pending = [];
		if (!open.stored) {
			open.info = this.store.createSession({ id: open.info.id, cwd: open.cwd, model: open.assembled.modelId });
			open.stored = true;
		}
		const controller = new AbortController();
		this.turn = controller;
		const { assembled } = open;
		const logPath = this.settings.log.detailedPath;
		try {
			for await (const event of runSessionTurn({
				store: this.store,
				session: open.info,
				resumed: open.resumed,
				log: logPath ? DetailedLog.open(resolve(open.cwd, logPath), open.info.id) : undefined,
				...assembled.turnOptions(),
				approve: (call, tool) => open.gate.approve(call, tool, controller.signal),
				input: { role: "user", content },
				maxToolRounds: this.settings.agent.maxToolRounds,
				signal: controller.signal,
				toolContext: { ...assembled.toolContext, askUser: (question) => this.askUser(question, controller.signal) },
			})) {
				if (event.type === "context") open.round = event.report.round;
				if (event.type === "usage") open.lastUsage = event.usage;
				open.renderer.render(event);
			}
		} catch (error) {
			this.say(this.style.red(`error: ${error instanceof Error ? error.message : String(error)}`));
		} finally {
			this.turn = undefined;
			open.resumed = true;
			open.renderer.endLine();
		}
	}

	/**
	 * /compact: folds the conversation so far into a summary checkpoint now (the model writes it; a mechanical digest
	 * stands in when it cannot). Ctrl-C stops the summary request. Every event is stored as a turn's would be.
	 */
	async compactNow(): Promise<void> {
		const open = this.session;
		if (!open.stored) return this.say("nothing to compact yet");
		const { assembled } = open;
		const state = loadSessionState(this.store, open.info.id);
		const system = assembled.systemNow();
		const definitions = assembled.toolset.definitions();
		const images = {
			vision: assembled.model.vision,
			maxImages: this.settings.agent.maxImagesPerRequest ?? DEFAULT_MAX_IMAGES_PER_REQUEST,
		};
		const controller = new AbortController();
		this.turn = controller;
		this.say(this.style.dim("compacting the conversation…"));
		try {
			const result = await assembled.context.compact({
				provider: assembled.provider,
				entries: state.entries,
				round: state.nextRound,
				frame: {
					fixedTokens: measureSystem(system).tokens + measureTools(definitions).tokens,
					tools: Object.fromEntries(assembled.toolset.all.map((tool) => [tool.name, { readOnly: tool.readOnly }])),
					system,
					definitions,
					resolve: (messages) => resolveImages(messages, images),
				},
				trigger: "manual",
				signal: controller.signal,
				sessionId: open.info.id,
			});
			for (const event of result.events) {
				this.storeEvent(event);
				open.renderer.render(event);
			}
			if (!result.compacted && controller.signal.aborted) this.say(this.style.yellow("compaction stopped"));
		} finally {
			this.turn = undefined;
		}
	}

	/** Stores an event outside a turn the way the session runner would. */
	private storeEvent(event: AgentEvent): void {
		const id = this.session.info.id;
		if (event.type === "decision") {
			this.store.appendDecision(id, { round: event.round, kind: event.kind, body: event.body });
		} else if (event.type !== "text.delta") this.store.appendEvent(id, event);
	}

	/** The approval prompt: one question per call, y / n / a; Ctrl-C (the turn's signal) answers no. */
	private async askApproval(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
		const open = this.session;
		open.renderer.line(
			`${this.style.yellow("?")} ${this.style.bold(request.tool)} wants to run: ${request.summary} ${this.style.dim(`(mode ${request.mode})`)}`,
		);
		for (;;) {
			const answer = await this.editor.question("  allow? [y]es / [n]o / [a]lways for this session: ", signal);
			if (answer === undefined) return "no";
			const word = answer.trim().toLowerCase();
			if (word === "y" || word === "yes") return "yes";
			if (word === "n" || word === "no" || word === "") return "no";
			if (word === "a" || word === "always") return "always";
		}
	}

	/** ask_user's answer from the person; undefined (an empty answer) when the turn stops. */
	private async askUser(question: string, signal: AbortSignal): Promise<string> {
		this.session.renderer.line(`${this.style.yellow("?")} ${question}`);
		return (await this.editor.question("  answer: ", signal)) ?? "";
	}

	/**
	 * Ctrl-C: stops the turn, and a second one leaves (while the turn stops or at the prompt after it); at an idle
	 * prompt it clears the line, or when the line is empty says how to leave — and a second one in a row leaves.
	 */
	private interrupt(): void {
		if (this.turn) {
			if (this.turn.signal.aborted) {
				this.editor.close();
				return;
			}
			this.turn.abort();
			// the next Ctrl-C leaves, unless something is typed first
			this.interruptArmed = true;
			this.say(this.style.yellow("^C stopping the turn… (Ctrl-C again to leave)"));
			return;
		}
		if (this.editor.currentLine !== "") {
			this.interruptArmed = false;
			this.editor.clearLine();
			return;
		}
		if (this.interruptArmed) {
			this.write("\n");
			this.editor.close();
			return;
		}
		this.interruptArmed = true;
		this.write(`\n${this.style.dim("(press Ctrl-C again or Ctrl-D to leave)")}\n`);
		this.editor.refresh();
	}
}

/** This process's terminal: stdin and stdout, colours unless NO_COLOR or not a terminal. */
export function processTerminal(): ChatTerminal {
	const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
	return {
		input: process.stdin,
		output: process.stdout,
		terminal,
		color: terminal && !process.env.NO_COLOR,
		columns: () => process.stdout.columns || 100,
	};
}
