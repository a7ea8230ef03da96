import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface, type Interface, type Key } from "node:readline";

// The prompt line of the interactive session, on node:readline: editing keys, history (persisted), continuation
// lines, Ctrl-C and Ctrl-D. One readline interface lives for the whole session, so keys typed during a turn
// (Ctrl-C above all) are seen at once.

export interface LineEditorOptions {
	input: NodeJS.ReadableStream;
	output: NodeJS.WritableStream;
	/** True for a terminal (raw keys, editing, history); false reads plain lines (pipes). */
	terminal: boolean;
	/** Where prompt history is kept across sessions ($SNOWPEA_HOME/history); none when absent. */
	historyFile?: string;
	/** Entries kept in the history file (default 1000). */
	historySize?: number;
}

/** The continuation prompt shown on the second and later lines of one entry. */
export const CONTINUATION_PROMPT = "… ";

/**
 * The session's line editor. `read` returns one whole entry: lines ending in "\" (or ended with Alt-Enter) continue
 * on the next line, and the entry is the lines joined with "\n" (the backslashes removed). Lines typed while nothing
 * is reading (during a turn) are kept and answer the next `read`. Contract: never throws after construction; a
 * history file that cannot be read or written is ignored.
 */
export class LineEditor {
	private readonly readline: Interface;
	private readonly typedAhead: string[] = [];
	private waiting: ((line: string | undefined) => void) | undefined;
	private closed = false;
	private questioning = false;
	private interruptHandler: () => void = () => undefined;
	private closeHandler: () => void = () => undefined;
	private readonly historyFile: string | undefined;
	private readonly historySize: number;

	constructor(private readonly options: LineEditorOptions) {
		this.historyFile = options.historyFile;
		this.historySize = options.historySize ?? 1000;
		this.readline = createInterface({
			input: options.input,
			output: options.output,
			terminal: options.terminal,
			history: options.terminal ? this.loadHistory() : [],
			historySize: options.terminal ? this.historySize : 0,
			removeHistoryDuplicates: true,
			tabSize: 4,
		});
		this.readline.on("line", (line) => this.onLine(line));
		this.readline.on("close", () => {
			this.closed = true;
			const waiting = this.waiting;
			this.waiting = undefined;
			waiting?.(undefined);
			this.closeHandler();
		});
		this.readline.on("SIGINT", () => this.interruptHandler());
		this.readline.on("history", (history) => this.onHistory(history));
		if (options.terminal) {
			options.input.on("keypress", (_text: string | undefined, key: Key | undefined) => {
				// Alt-Enter: readline ignores it; end the line with a continuation instead
				if (key?.meta && (key.name === "return" || key.name === "enter") && this.waiting && !this.questioning) {
					this.readline.write(null, { ctrl: true, name: "e" });
					this.readline.write("\\\n");
				}
			});
		}
	}

	/** Called on Ctrl-C (terminal) — the session decides whether that stops a turn or leaves. */
	onInterrupt(handler: () => void): void {
		this.interruptHandler = handler;
	}

	/** Called once when input ends (Ctrl-D on an empty line, end of piped input, close()). */
	onClose(handler: () => void): void {
		this.closeHandler = handler;
	}

	/** True once input has ended. */
	get isClosed(): boolean {
		return this.closed;
	}

	/** The text typed so far on the current line. */
	get currentLine(): string {
		return this.readline.line;
	}

	/** Empties the current line and shows the prompt again. */
	clearLine(): void {
		if (this.closed || !this.options.terminal) return;
		this.readline.write(null, { ctrl: true, name: "e" });
		this.readline.write(null, { ctrl: true, name: "u" });
	}

	/**
	 * Shows `prompt` and resolves with the next whole entry (continuation lines joined with "\n"), or undefined when
	 * input ended. Only one read or question at a time.
	 */
	async read(prompt: string): Promise<string | undefined> {
		const lines: string[] = [];
		let current = prompt;
		for (;;) {
			const line = await this.nextLine(current);
			if (line === undefined) return lines.length > 0 ? lines.join("\n") : undefined;
			const continued = /(?<!\\)\\$/.test(line);
			lines.push(continued ? line.slice(0, -1) : line);
			if (!continued) return lines.join("\n");
			current = CONTINUATION_PROMPT;
		}
	}

	/**
	 * Asks one question (a line not kept in history, typed-ahead lines discarded so nothing typed earlier answers it).
	 * Resolves undefined when `signal` aborts or input ends.
	 */
	async question(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
		if (signal?.aborted) return undefined;
		this.typedAhead.length = 0;
		this.questioning = true;
		const onAbort = () => {
			const waiting = this.waiting;
			this.waiting = undefined;
			if (waiting) {
				this.clearLine();
				this.options.output.write("\n");
				waiting(undefined);
			}
		};
		signal?.addEventListener("abort", onAbort, { once: true });
		try {
			return await this.nextLine(prompt);
		} finally {
			this.questioning = false;
			signal?.removeEventListener("abort", onAbort);
		}
	}

	/** Shows the prompt of a pending read again (after something else was written below it). */
	refresh(): void {
		if (this.waiting && !this.closed) this.readline.prompt(true);
	}

	/** Ends input: a pending read resolves undefined. */
	close(): void {
		if (!this.closed) this.readline.close();
	}

	private nextLine(prompt: string): Promise<string | undefined> {
		const early = this.typedAhead.shift();
		if (early !== undefined) {
			if (this.options.terminal) this.options.output.write(`${prompt}${early}\n`);
			return Promise.resolve(early);
		}
		if (this.closed) return Promise.resolve(undefined);
		return new Promise((resolve) => {
			this.waiting = resolve;
			this.readline.setPrompt(prompt);
			this.readline.prompt();
		});
	}

	private onLine(line: string): void {
		const waiting = this.waiting;
		this.waiting = undefined;
		if (waiting) waiting(line);
		else this.typedAhead.push(line);
	}

	private onHistory(history: string[]): void {
		// answers to questions ("y") are not prompts worth recalling
		if (this.questioning && history.length > 0) history.shift();
		else this.saveHistory(history);
	}

	private loadHistory(): string[] {
		if (!this.historyFile) return [];
		try {
			const lines = readFileSync(this.historyFile, "utf8").split("\n").filter(Boolean);
			return lines.slice(-this.historySize).reverse();
		} catch {
			return [];
		}
	}

	private saveHistory(history: readonly string[]): void {
		if (!this.historyFile) return;
		try {
			mkdirSync(dirname(this.historyFile), { recursive: true, mode: 0o700 });
			const text = [...history.slice(0, this.historySize)].reverse().join("\n");
			writeFileSync(this.historyFile, `${text}\n`, { mode: 0o600 });
			chmodSync(this.historyFile, 0o600);
		} catch {
			// history is a convenience: a read-only home must not stop the session
		}
	}
}
