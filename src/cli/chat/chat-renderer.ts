import type { AgentEvent } from "../../agent/events.js";

// How agent events look in the interactive session: the answer streams as it comes, each tool call and its result
// take one numbered line each, and /expand N shows a result in full.

/** ANSI styling, or none (NO_COLOR, not a terminal). */
export interface Style {
	dim(text: string): string;
	bold(text: string): string;
	red(text: string): string;
	green(text: string): string;
	cyan(text: string): string;
	yellow(text: string): string;
}

export function ansiStyle(enabled: boolean): Style {
	const wrap = (open: number, close: number) => (text: string) =>
		enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
	return {
		dim: wrap(2, 22),
		bold: wrap(1, 22),
		red: wrap(31, 39),
		green: wrap(32, 39),
		cyan: wrap(36, 39),
		yellow: wrap(33, 39),
	};
}

/** A tool call of this session, numbered from 1 in the order they were made. */
export interface ToolCallRecord {
	number: number;
	id: string;
	name: string;
	arguments: string;
	ok?: boolean;
	/** The tool's whole output (before any cap). */
	output?: string;
}

const clip = (text: string, max: number) => {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * Renders agent events to `write`. Keeps every tool call's full output for /expand.
 * Contract: never throws; every line it starts it ends before a different kind of output.
 */
export class ChatRenderer {
	private readonly records: ToolCallRecord[] = [];
	private readonly byId = new Map<string, ToolCallRecord>();
	private midLine = false;

	constructor(
		private readonly write: (text: string) => void,
		private readonly style: Style,
		private readonly width: () => number = () => 100,
	) {}

	/** The calls rendered so far, oldest first. */
	get calls(): readonly ToolCallRecord[] {
		return this.records;
	}

	/** Writes a line of its own (a notice, a command's answer), ending any line in progress first. */
	line(text: string): void {
		this.endLine();
		this.write(`${text}\n`);
	}

	render(event: AgentEvent): void {
		switch (event.type) {
			case "text.delta":
				if (event.text === "") return;
				this.write(event.text);
				this.midLine = !event.text.endsWith("\n");
				return;
			case "tool.call": {
				const record: ToolCallRecord = {
					number: this.records.length + 1,
					id: event.id,
					name: event.name,
					arguments: event.arguments,
				};
				this.records.push(record);
				this.byId.set(event.id, record);
				const room = Math.max(20, this.width() - event.name.length - 12);
				this.line(this.style.cyan(`  [${record.number}] → ${event.name} ${clip(event.arguments, room)}`));
				return;
			}
			case "tool.result": {
				const record = this.byId.get(event.id);
				if (record) {
					record.ok = event.ok;
					record.output = event.output;
				}
				const text = event.display ?? event.output;
				const first = text.split("\n").find((line) => line.trim() !== "") ?? "";
				const lines = event.output.split("\n").length;
				const more = lines > 1 && record ? this.style.dim(` (${lines} lines · /expand ${record.number})`) : "";
				const mark = event.ok ? this.style.green("✓") : this.style.red("✗");
				const room = Math.max(20, this.width() - event.name.length - 30);
				this.line(`  ${record ? `[${record.number}] ` : ""}${mark} ${event.name}: ${clip(first, room)}${more}`);
				return;
			}
			case "retry":
				this.line(
					this.style.yellow(
						`retrying in ${Math.round(event.delayMs / 100) / 10}s (attempt ${event.attempt}): ${event.reason}`,
					),
				);
				return;
			case "warning":
				this.line(this.style.yellow(`warning: ${event.message}`));
				return;
			case "loop.suspected":
				this.line(this.style.yellow(`loop suspected: ${event.tool} ×${event.count}`));
				return;
			case "elision":
				this.line(
					this.style.dim(
						`context: ${event.kind} replaced ${event.count} old result${event.count === 1 ? "" : "s"}${event.argumentMessages > 0 ? ` and long call arguments in ${event.argumentMessages} earlier message${event.argumentMessages === 1 ? "" : "s"}` : ""} (${Math.round(event.reclaimedBytes / 1024)} KB)`,
					),
				);
				return;
			case "compaction":
				this.line(
					this.style.dim(
						`context: compacted ${event.tokensBefore.toLocaleString("en-US")} → ${event.tokensAfter.toLocaleString("en-US")} tokens (${event.source}, ${event.trigger})`,
					),
				);
				return;
			case "error":
				this.line(this.style.red(`error: ${event.message}`));
				return;
			case "turn.done":
				this.endLine();
				if (event.stopReason === "max_rounds") this.line(`stopped: reached the limit of ${event.rounds} rounds`);
				else if (event.stopReason === "aborted") this.line(this.style.yellow("stopped: interrupted"));
				else if (event.stopReason !== "done" && event.stopReason !== "error") this.line(`stopped: ${event.stopReason}`);
				return;
			default:
				return;
		}
	}

	/** The full output of call `number` (default: the last call), or a line saying why there is none. */
	expand(number?: number): string {
		if (this.records.length === 0) return "no tool calls yet";
		const record = number === undefined ? this.records.at(-1) : this.records[number - 1];
		if (!record) return `no tool call ${number}; calls are numbered 1 to ${this.records.length}`;
		const header = this.style.bold(`[${record.number}] ${record.name} ${clip(record.arguments, 200)}`);
		if (record.output === undefined) return `${header}\n(no result yet)`;
		return `${header}\n${record.output}`;
	}

	/** Ends a streamed line in progress. */
	endLine(): void {
		if (this.midLine) this.write("\n");
		this.midLine = false;
	}
}
