/** What a page reported: console.error, console.warn, an uncaught exception, or a request the URL policy refused. */
export type ConsoleKind = "error" | "warning" | "exception" | "refused";

interface Entry {
	kind: ConsoleKind;
	text: string;
	count: number;
}

/** Entries kept between two reports. */
export const CONSOLE_LIMIT = 50;
/** Characters kept of one message (after whitespace is collapsed). */
export const CONSOLE_MESSAGE_CHARACTERS = 500;

/** What `drain` hands back: the lines to show and how many older entries fell out of the buffer. */
export interface ConsoleReport {
	lines: string[];
	dropped: number;
}

/**
 * The page's errors and warnings since the last report. Each message is reported once: `drain` empties the buffer.
 * The same message logged again before a report is one entry with a count ("(×3)"), so a page that logs one error per
 * frame cannot crowd out the others; only the newest `limit` distinct entries are kept.
 */
export class ConsoleBuffer {
	private entries: Entry[] = [];
	private dropped = 0;

	constructor(private readonly limit: number = CONSOLE_LIMIT) {}

	/** Records one message; whitespace runs become one space and long messages are cut. */
	add(kind: ConsoleKind, text: string): void {
		let line = text.replace(/\s+/g, " ").trim();
		if (line === "") line = "(empty message)";
		if (line.length > CONSOLE_MESSAGE_CHARACTERS) line = `${line.slice(0, CONSOLE_MESSAGE_CHARACTERS)}…`;
		const same = this.entries.find((entry) => entry.kind === kind && entry.text === line);
		if (same) {
			same.count += 1;
			return;
		}
		this.entries.push({ kind, text: line, count: 1 });
		if (this.entries.length > this.limit) {
			this.entries.shift();
			this.dropped += 1;
		}
	}

	/** True when nothing is waiting to be reported. */
	get empty(): boolean {
		return this.entries.length === 0 && this.dropped === 0;
	}

	/** Everything since the last drain, oldest first, and empties the buffer. */
	drain(): ConsoleReport {
		const lines = this.entries.map(
			(entry) => `- [${entry.kind}] ${entry.text}${entry.count > 1 ? ` (×${entry.count})` : ""}`,
		);
		const report = { lines, dropped: this.dropped };
		this.entries = [];
		this.dropped = 0;
		return report;
	}
}

/** The "Console errors:" block for a report, or "" when there is nothing to report. */
export function formatConsoleBlock(report: ConsoleReport): string {
	if (report.lines.length === 0 && report.dropped === 0) return "";
	const dropped = report.dropped > 0 ? [`(${report.dropped} older messages dropped)`] : [];
	return ["Console errors:", ...dropped, ...report.lines].join("\n");
}
