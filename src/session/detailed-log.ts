import {
	appendFileSync,
	closeSync,
	existsSync,
	fstatSync,
	mkdirSync,
	openSync,
	readSync,
	renameSync,
	statSync,
} from "node:fs";
import { dirname } from "node:path";
import type { AgentEvent } from "../agent/events.js";

/**
 * The detailed request log (llm.jsonl): one JSON object per line, `seq` strictly increasing across every writer
 * of the same file, also across restarts (the next seq continues from the file's last line).
 * Per round: a `request` event (round, request_bytes, tool_result_bytes, estimated_tokens) and a `response` event
 * (round, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, tool_result_bytes), and an `elision`
 * event (round, kind, count, reclaimed_bytes, tool_result_bytes after) for every context pass that changed something,
 * and a `compaction` event (round, source, trigger, tokens_before, tokens_after, and the summary call's input, cached
 * and output tokens when it made one) for every compaction checkpoint.
 */
export class DetailedLog {
	private seq: number;
	private toolResultBytes = 0;

	private constructor(
		private readonly path: string,
		private readonly sessionId: string,
		private readonly maxBytes: number,
	) {
		this.seq = Math.max(lastSeq(path), lastSeq(`${path}.1`));
	}

	/** Opens (creating directories) a log; past `maxBytes` the file is rotated to `<path>.1`, keeping one backup. */
	static open(path: string, sessionId: string, maxBytes = 64 * 1024 * 1024): DetailedLog {
		mkdirSync(dirname(path), { recursive: true });
		return new DetailedLog(path, sessionId, maxBytes);
	}

	/** Writes any record; `event` names its kind. */
	write(event: string, fields: Record<string, unknown>): void {
		this.seq = Math.max(this.seq, lastSeq(this.path)) + 1;
		if (existsSync(this.path) && statSync(this.path).size >= this.maxBytes) renameSync(this.path, `${this.path}.1`);
		const line = { seq: this.seq, ts: new Date().toISOString(), session_id: this.sessionId, event, ...fields };
		// a writer killed mid-line leaves a torn last line: start on a fresh one
		const separator = endsMidLine(this.path) ? "\n" : "";
		appendFileSync(this.path, `${separator}${JSON.stringify(line)}\n`);
	}

	/** Turns the agent events that matter into log records. */
	observe(event: AgentEvent): void {
		if (event.type === "context") {
			this.toolResultBytes = event.report.toolResults.bytes;
			this.write("request", {
				round: event.report.round,
				request_bytes: event.report.total.bytes,
				tool_result_bytes: event.report.toolResults.bytes,
				estimated_tokens: event.report.total.tokens,
			});
		} else if (event.type === "elision") {
			this.toolResultBytes = event.toolResultBytesAfter;
			this.write("elision", {
				round: event.round,
				kind: event.kind,
				count: event.count,
				argument_messages: event.argumentMessages,
				reclaimed_bytes: event.reclaimedBytes,
				tool_result_bytes: event.toolResultBytesAfter,
				...(event.reason ? { reason: event.reason } : {}),
			});
		} else if (event.type === "compaction") {
			this.write("compaction", {
				round: event.round,
				source: event.source,
				trigger: event.trigger,
				tokens_before: event.tokensBefore,
				tokens_after: event.tokensAfter,
				...(event.usage
					? {
							input_tokens: event.usage.input,
							cached_input_tokens: event.usage.cacheRead,
							output_tokens: event.usage.output,
						}
					: {}),
			});
		} else if (event.type === "usage") {
			this.write("response", {
				round: event.round,
				input_tokens: event.usage.input,
				cached_input_tokens: event.usage.cacheRead,
				cache_write_tokens: event.usage.cacheWrite,
				output_tokens: event.usage.output,
				tool_result_bytes: this.toolResultBytes,
				...(event.cache ? { cache: event.cache.kind, cache_reused: event.cache.reused } : {}),
				...(event.cache?.because ? { cache_because: event.cache.because } : {}),
			});
		}
	}
}

/** The seq of the file's last complete line, 0 for a new or empty file. Reads only the file's tail. */
function lastSeq(path: string): number {
	if (!existsSync(path)) return 0;
	const descriptor = openSync(path, "r");
	try {
		const size = fstatSync(descriptor).size;
		const length = Math.min(size, 64 * 1024);
		const buffer = Buffer.alloc(length);
		readSync(descriptor, buffer, 0, length, size - length);
		const lines = buffer
			.toString("utf8")
			.split("\n")
			.filter((line) => line.trim() !== "");
		for (const line of lines.reverse()) {
			try {
				const seq = (JSON.parse(line) as { seq?: unknown }).seq;
				if (typeof seq === "number") return seq;
			} catch {
				// a torn last line from a killed writer: look at the one before
			}
		}
		return 0;
	} finally {
		closeSync(descriptor);
	}
}

/** True when the file exists, is not empty and does not end with a newline. */
function endsMidLine(path: string): boolean {
	if (!existsSync(path)) return false;
	const descriptor = openSync(path, "r");
	try {
		const size = fstatSync(descriptor).size;
		if (size === 0) return false;
		const last = Buffer.alloc(1);
		readSync(descriptor, last, 0, 1, size - 1);
		return last[0] !== 0x0a;
	} finally {
		closeSync(descriptor);
	}
}
