import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolvePath, showPath } from "../tools/paths.js";
import { DEFAULT_LINE_LIMIT } from "../tools/read-file.js";
import type { Permission, Tool, ToolContext, ToolResult } from "../tools/tool.js";
import { failure } from "../tools/tool.js";

/** Consecutive identical calls: the 3rd gets a warning, the 4th and later are refused. */
const STREAK_WARN = 3;
const STREAK_BLOCK = 4;
/** Unchanged re-reads answered with a stub before the next one is refused. */
const READ_STUBS = 2;
/** Identical scan results recorded before the next identical call is refused. */
const SCAN_REPEATS = 2;
/** Calls remembered for loop suspicion, and how often one call must appear among them. */
const WINDOW_SIZE = 20;
const WINDOW_THRESHOLD = 5;
/** Cycle periods checked, and how many times a cycle must repeat back to back. */
const CYCLE_PERIODS = [2, 3, 4];
const CYCLE_REPEATS = 3;
/** Remembered read keys and scan entries, each (oldest evicted first). */
const MAX_KEYS = 2048;

const SCANNING_TOOLS: ReadonlySet<string> = new Set(["shell", "grep", "glob", "list_dir"]);
const WRITE_TOOLS: ReadonlySet<string> = new Set(["write_file", "edit_file"]);

/** One tool call as the guard sees it. */
export interface GuardedCall {
	id: string;
	name: string;
	/** The raw argument text the model sent. */
	arguments: string;
	/** The tool's source ("builtin", "mcp:<server>", "agent"); "mcp:" tools are compared by their output. */
	source: string;
	/** The tool's permission when known; a "write" tool's output is never compared. `guardedExecute` fills it. */
	permission?: Permission;
}

/** The final answer to a call, and a loop suspicion the loop should announce as a `loop.suspected` event. */
export interface GuardVerdict {
	result: ToolResult;
	loopSuspected?: { tool: string; count: number };
}

interface ReadEntry {
	/** Absolute path, for clearing on writes. */
	path: string;
	/** The path as the model is shown it. */
	shown: string;
	sha256: string;
	lines: number;
	/** Stubs answered since the read that ran. */
	stubs: number;
	/** The call whose result holds the content. */
	callId: string;
}

interface ScanEntry {
	hash: string;
	lines: number;
	/** Identical results recorded after the first. */
	repeats: number;
	/** The call whose result holds the full output. */
	callId: string;
}

interface WindowSlot {
	signature: string;
	name: string;
}

/**
 * What a guard remembers across turns and processes: its read and scan records (streaks and the loop window restart
 * with every turn anyway). Plain JSON; the session store keeps the latest one per session as a `guard.state` event.
 * Safe to restore later: a read stub is only ever given when the file still hashes to what it hashed to when read.
 */
export interface GuardState {
	reads: [string, ReadEntry][];
	scans: [string, ScanEntry][];
}

/** What `before` worked out about a call, for `after` to apply. */
interface Pending {
	streak: number;
	windowCount: number;
	cycle?: string[];
}

/**
 * Stops redundant and looping tool calls of one session: unchanged re-reads get a one-line stub, identical scan
 * output is replaced by a stub, persistent repeats are refused with `repeat_blocked`, and loops get a warning.
 * Contract: no method throws; an exception inside the guard lets the call proceed unguarded. A disabled guard does
 * nothing at all: `before` answers undefined and `after` hands back the very result it was given.
 */
export class RepeatGuard {
	private readonly enabled: boolean;
	private readonly cwd: string;
	private readonly reads = new Map<string, ReadEntry>();
	private readonly scans = new Map<string, ScanEntry>();
	private readonly pending = new Map<string, Pending>();
	private window: WindowSlot[] = [];
	/** Bumped by every guarded call and every forget, so a caller saves a snapshot only when something may be new. */
	private version = 0;
	private lastSignature: string | undefined;
	private streak = 0;
	private loopReported = false;

	constructor(options: { enabled: boolean; cwd: string }) {
		this.enabled = options.enabled;
		this.cwd = options.cwd;
	}

	/** A new user turn: streaks and the loop window restart, and loop suspicion may be reported once more. */
	startTurn(): void {
		// A new prompt from the person is a change of course: streaks and the loop window start again
		// (the warning says "this turn"). Read stubs and scan results stay: files and outputs are still current.
		this.loopReported = false;
		this.window = [];
		this.lastSignature = undefined;
		this.streak = 0;
	}

	/**
	 * Before the call runs: a result to return INSTEAD of running (a stub or a refusal), or undefined to run it.
	 * Counts the call towards streaks and loop suspicion, so call it exactly once per call, then `after`.
	 * `isVisible(callId)` says whether that call's result still reaches the model verbatim.
	 */
	before(call: GuardedCall, isVisible: (callId: string) => boolean): ToolResult | undefined {
		if (!this.enabled) return undefined;
		this.version++;
		try {
			return this.check(call, isVisible);
		} catch {
			return undefined;
		}
	}

	/**
	 * After it ran (or was answered by `before`): the final result with notes/stubs applied, and any loop suspicion.
	 * Results answered by the guard are never recorded as reads or scan output.
	 */
	after(call: GuardedCall, result: ToolResult, answeredByGuard: boolean): GuardVerdict {
		if (!this.enabled) return { result };
		this.version++;
		try {
			return this.record(call, result, answeredByGuard);
		} catch {
			return { result };
		}
	}

	/** How many times the remembered reads and scans have changed (compare two values to see whether to save). */
	get changes(): number {
		return this.version;
	}

	/** The reads and scans remembered now, for the session store. */
	snapshot(): GuardState {
		return { reads: [...this.reads], scans: [...this.scans] };
	}

	/**
	 * Takes back a stored snapshot (a resumed session): entries of the wrong shape are skipped, never trusted. The
	 * calls they name must still be visible for a stub to be given, exactly as before the restart.
	 */
	restore(state: unknown): void {
		if (!this.enabled || typeof state !== "object" || state === null) return;
		const { reads, scans } = state as Partial<Record<keyof GuardState, unknown>>;
		for (const [key, entry] of pairs(reads)) if (isReadEntry(entry)) remember(this.reads, key, { ...entry });
		for (const [key, entry] of pairs(scans)) if (isScanEntry(entry)) remember(this.scans, key, { ...entry });
	}

	/** Calls whose results the context engine replaced: their reads and scan results are forgotten. */
	forget(callIds: Iterable<string>): void {
		if (!this.enabled) return;
		try {
			const gone = new Set(callIds);
			for (const [key, entry] of this.reads) if (gone.has(entry.callId)) this.reads.delete(key);
			for (const [key, entry] of this.scans) if (gone.has(entry.callId)) this.scans.delete(key);
			this.version++;
		} catch {
			// Forgetting is best effort; the visibility check in `before` still protects stale entries.
		}
	}

	private check(call: GuardedCall, isVisible: (callId: string) => boolean): ToolResult | undefined {
		const canonical = canonicalArguments(call.arguments);
		const signature = `${call.name}\n${canonical}`;
		const pending = this.count(call, signature);
		remember(this.pending, call.id, pending);

		if (pending.streak >= STREAK_BLOCK) {
			return refusal(
				`STOP calling ${call.name} with the same arguments — this is the ${ordinal(pending.streak)} identical call in a row and the result has not changed; continue with the task`,
			);
		}

		if (WRITE_TOOLS.has(call.name)) {
			const path = this.pathArgument(canonical);
			if (path !== undefined) this.clearPath(path);
			return undefined;
		}

		if (call.name === "read_file") {
			const key = this.readKey(canonical);
			const entry = key === undefined ? undefined : this.reads.get(key);
			if (key === undefined || entry === undefined) return undefined;
			const current = isVisible(entry.callId) ? hashFile(entry.path) : undefined;
			if (current !== entry.sha256) {
				this.reads.delete(key);
				return undefined;
			}
			const summary = `${entry.lines} ${entry.lines === 1 ? "line" : "lines"}, sha256 ${entry.sha256.slice(0, 8)}`;
			if (entry.stubs >= READ_STUBS) {
				return refusal(
					`STOP calling read_file on ${entry.shown} — it is unchanged since your earlier read_file (${summary}) and you have been told so ${READ_STUBS} times; use the content in that result and continue with the task`,
				);
			}
			entry.stubs++;
			return {
				ok: true,
				content: `unchanged since your earlier read_file of ${entry.shown} (${summary}); the content in that result is still current`,
				details: { path: entry.path, lines: entry.lines, sha256: entry.sha256, repeatGuard: "stub" },
			};
		}

		if (this.isScanning(call)) {
			const entry = this.scans.get(signature);
			if (entry === undefined) return undefined;
			if (!isVisible(entry.callId)) {
				this.scans.delete(signature);
				return undefined;
			}
			if (entry.repeats >= SCAN_REPEATS) {
				return refusal(
					`STOP calling ${call.name} with these arguments — it has returned the same ${entry.lines} ${entry.lines === 1 ? "line" : "lines"} every time; continue with the task`,
				);
			}
		}
		return undefined;
	}

	private record(call: GuardedCall, result: ToolResult, answeredByGuard: boolean): GuardVerdict {
		const canonical = canonicalArguments(call.arguments);
		const signature = `${call.name}\n${canonical}`;
		let pending = this.pending.get(call.id);
		this.pending.delete(call.id);
		// `after` without `before`: count the call now so streaks and the window stay right.
		if (pending === undefined) pending = this.count(call, signature);

		let final = result;
		if (!answeredByGuard) final = this.recordResult(call, canonical, signature, result);

		const notes: string[] = [];
		if (pending.streak === STREAK_WARN) {
			notes.push(
				`this is the ${ordinal(STREAK_WARN)} identical ${call.name} call in a row; the result has not changed`,
			);
		}
		let loopSuspected: GuardVerdict["loopSuspected"];
		if (!this.loopReported && pending.windowCount >= WINDOW_THRESHOLD) {
			this.loopReported = true;
			loopSuspected = { tool: call.name, count: pending.windowCount };
			notes.push(
				`loop suspected: ${call.name} with the same arguments has run ${pending.windowCount} times this turn; change approach or finish with what you have`,
			);
		} else if (!this.loopReported && pending.cycle !== undefined) {
			this.loopReported = true;
			const cycle = pending.cycle.join(" → ");
			loopSuspected = { tool: pending.cycle.join("→"), count: CYCLE_REPEATS };
			notes.push(
				`loop suspected: the calls ${cycle} have repeated ${CYCLE_REPEATS} times in a row; change approach or finish with what you have`,
			);
		}
		if (notes.length > 0) {
			const text = notes.join("\n");
			final = { ...final, content: final.content === "" ? text : `${final.content}\n\n${text}` };
		}
		return loopSuspected ? { result: final, loopSuspected } : { result: final };
	}

	/** Records what a call that really ran produced, and answers with its result or a scan stub. */
	private recordResult(call: GuardedCall, canonical: string, signature: string, result: ToolResult): ToolResult {
		if (WRITE_TOOLS.has(call.name)) {
			if (result.ok) {
				const written = typeof result.details?.path === "string" ? result.details.path : undefined;
				const path = written ?? this.pathArgument(canonical);
				if (path !== undefined) this.clearPath(path);
			}
			return result;
		}

		if (call.name === "read_file") {
			const key = this.readKey(canonical);
			if (key === undefined) return result;
			const details = result.details;
			const path = typeof details?.path === "string" ? details.path : this.pathArgument(canonical);
			if (!result.ok || path === undefined) {
				this.reads.delete(key);
				return result;
			}
			const sha256 = typeof details?.sha256 === "string" ? details.sha256 : hashFile(path);
			if (sha256 === undefined) {
				// A path that cannot be hashed opts out.
				this.reads.delete(key);
				return result;
			}
			const lines = typeof details?.lines === "number" ? details.lines : countLines(result.content);
			remember(this.reads, key, { path, shown: showPath(this.cwd, path), sha256, lines, stubs: 0, callId: call.id });
			return result;
		}

		if (this.isScanning(call) && result.errorCode !== "aborted") {
			const hash = createHash("sha256")
				.update(`${result.ok}\n${result.errorCode ?? ""}\n${result.content}`)
				.digest("hex");
			const entry = this.scans.get(signature);
			if (entry === undefined || entry.hash !== hash) {
				remember(this.scans, signature, { hash, lines: countLines(result.content), repeats: 0, callId: call.id });
				return result;
			}
			entry.repeats++;
			const lines = `${entry.lines} ${entry.lines === 1 ? "line" : "lines"}`;
			return {
				...result,
				content: `same result as your earlier ${call.name} call (${lines})`,
				details: { ...result.details, repeatGuard: "stub" },
			};
		}
		return result;
	}

	/** Counts a call towards the consecutive streak and the loop window. */
	private count(call: GuardedCall, signature: string): Pending {
		this.streak = signature === this.lastSignature ? this.streak + 1 : 1;
		this.lastSignature = signature;
		this.window.push({ signature, name: call.name });
		if (this.window.length > WINDOW_SIZE) this.window = this.window.slice(-WINDOW_SIZE);
		const windowCount = this.window.filter((slot) => slot.signature === signature).length;
		return { streak: this.streak, windowCount, cycle: findCycle(this.window) };
	}

	private isScanning(call: GuardedCall): boolean {
		if (WRITE_TOOLS.has(call.name) || call.permission === "write") return false;
		return SCANNING_TOOLS.has(call.name) || call.source.startsWith("mcp:");
	}

	/** The absolute path a read/write/edit argument names, resolved as the tools resolve it. */
	private pathArgument(canonical: string): string | undefined {
		const args = parseObject(canonical);
		const path = args?.path;
		return typeof path === "string" && path !== "" ? resolvePath(this.cwd, path) : undefined;
	}

	/** (path, offset, limit, char_offset) of a read_file call, defaults filled in; undefined when unparseable. */
	private readKey(canonical: string): string | undefined {
		const args = parseObject(canonical);
		const path = this.pathArgument(canonical);
		if (args === undefined || path === undefined) return undefined;
		return JSON.stringify([path, args.offset ?? 1, args.limit ?? DEFAULT_LINE_LIMIT, args.char_offset ?? null]);
	}

	private clearPath(path: string): void {
		for (const [key, entry] of this.reads) if (entry.path === path) this.reads.delete(key);
	}
}

/**
 * Convenience for the loop: before → run (when needed) → after.
 * Contract: never throws or rejects; a tool that throws despite its contract becomes a `tool_failed` result.
 */
export async function guardedExecute(
	guard: RepeatGuard,
	tool: Tool,
	call: GuardedCall,
	context: ToolContext,
	isVisible: (callId: string) => boolean,
): Promise<GuardVerdict> {
	const guarded: GuardedCall = call.permission === undefined ? { ...call, permission: tool.permission } : call;
	const early = guard.before(guarded, isVisible);
	let result: ToolResult;
	if (early !== undefined) result = early;
	else {
		try {
			result = await tool.execute(call.arguments, context);
		} catch (error) {
			result = failure("tool_failed", `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
	return guard.after(guarded, result, early !== undefined);
}

/** JSON with sorted keys and no spaces; the raw text when it is not JSON ("" counts as {}). */
export function canonicalArguments(raw: string): string {
	const text = raw.trim() === "" ? "{}" : raw;
	try {
		return JSON.stringify(sortKeys(JSON.parse(text)));
	} catch {
		return raw;
	}
}

function sortKeys(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(sortKeys);
	if (value === null || typeof value !== "object") return value;
	const sorted: Record<string, unknown> = {};
	for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
	return sorted;
}

function parseObject(canonical: string): Record<string, unknown> | undefined {
	try {
		const value: unknown = JSON.parse(canonical);
		return value !== null && typeof value === "object" && !Array.isArray(value)
			? (value as Record<string, unknown>)
			: undefined;
	} catch {
		return undefined;
	}
}

/** The shortest cycle of period 2–4 that fills the last 3 × period slots; undefined when none. Names in order. */
function findCycle(window: WindowSlot[]): string[] | undefined {
	for (const period of CYCLE_PERIODS) {
		const span = period * CYCLE_REPEATS;
		if (window.length < span) continue;
		const tail = window.slice(-span);
		const first = tail.slice(0, period);
		if (first.every((slot) => slot.signature === first[0]?.signature)) continue;
		if (tail.every((slot, index) => slot.signature === first[index % period]?.signature)) {
			return first.map((slot) => slot.name);
		}
	}
	return undefined;
}

/** The SHA-256 of a file's bytes, or undefined when it cannot be read. */
function hashFile(path: string): string | undefined {
	try {
		return createHash("sha256").update(readFileSync(path)).digest("hex");
	} catch {
		return undefined;
	}
}

function countLines(text: string): number {
	if (text === "") return 0;
	const parts = text.split("\n").length;
	return text.endsWith("\n") ? parts - 1 : parts;
}

/** Sets `key` as the newest entry and evicts the oldest beyond MAX_KEYS. */
/** The [key, value] pairs of a stored map, ignoring anything that is not one. */
function pairs(value: unknown): [string, unknown][] {
	if (!Array.isArray(value)) return [];
	return value.filter(
		(pair): pair is [string, unknown] => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === "string",
	);
}

/** True when `value` is an object whose every field in `fields` is a string or an integer, as named. */
function shaped(value: unknown, fields: Record<string, "string" | "integer">): boolean {
	if (typeof value !== "object" || value === null) return false;
	const record = value as Record<string, unknown>;
	return Object.entries(fields).every(([key, kind]) =>
		kind === "string" ? typeof record[key] === "string" : Number.isInteger(record[key]),
	);
}

function isReadEntry(value: unknown): value is ReadEntry {
	return shaped(value, {
		path: "string",
		shown: "string",
		sha256: "string",
		lines: "integer",
		stubs: "integer",
		callId: "string",
	});
}

function isScanEntry(value: unknown): value is ScanEntry {
	return shaped(value, { hash: "string", lines: "integer", repeats: "integer", callId: "string" });
}

function remember<Value>(map: Map<string, Value>, key: string, value: Value): void {
	map.delete(key);
	map.set(key, value);
	while (map.size > MAX_KEYS) {
		const oldest = map.keys().next().value;
		if (oldest === undefined) break;
		map.delete(oldest);
	}
}

function refusal(message: string): ToolResult {
	return { ...failure("repeat_blocked", `repeat_blocked: ${message}`), details: { repeatGuard: "blocked" } };
}

function ordinal(n: number): string {
	const tens = n % 100;
	if (tens >= 11 && tens <= 13) return `${n}th`;
	const suffix = n % 10 === 1 ? "st" : n % 10 === 2 ? "nd" : n % 10 === 3 ? "rd" : "th";
	return `${n}${suffix}`;
}
