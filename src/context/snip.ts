import { omittedMarker, splitLines, utf8Bytes } from "../llm/text.js";

/** How much of a stale result a snip keeps: whole lines from each end, each end also capped in characters. */
export interface SnipGeometry {
	headLines: number;
	tailLines: number;
	headChars: number;
	tailChars: number;
}

/** Read-only tools (and tools we know nothing about): the start of a file or listing matters most. */
export const READ_ONLY_SNIP: SnipGeometry = { headLines: 80, tailLines: 12, headChars: 10_000, tailChars: 2_000 };

/** Side-effecting tools: a command's outcome is usually at its end. */
export const SIDE_EFFECTING_SNIP: SnipGeometry = { headLines: 40, tailLines: 40, headChars: 8_000, tailChars: 8_000 };

/** What the engine knows of a tool: its tier, and its own line geometry when it has one. */
export interface SnipTool {
	readOnly: boolean;
	snip?: { headLines: number; tailLines: number };
}

/** The geometry for a tool: its own line hint wins, characters come from its tier; unknown tools count as read-only. */
export function snipGeometry(tool: SnipTool | undefined): SnipGeometry {
	const tier = tool === undefined || tool.readOnly ? READ_ONLY_SNIP : SIDE_EFFECTING_SNIP;
	return tool?.snip ? { ...tier, headLines: tool.snip.headLines, tailLines: tool.snip.tailLines } : tier;
}

/**
 * A stale result cut to its head and tail, behind the marker line
 * `[snipped tool result — <tool> (<bytes> bytes) archive=<path|none> head=<h> tail=<t>]`
 * where bytes are the original's UTF-8 bytes and h/t count the lines kept at each end (a partly kept line counts).
 * With more lines than headLines + tailLines, whole lines are kept (each end then capped at its character limit);
 * otherwise (few, long lines) at most min(headChars, ½) of the characters are kept at the head and
 * min(tailChars, ¼) at the tail. An `[… N lines (B bytes) omitted]` line stands for the middle.
 * Never splits a surrogate pair; pure; the result may be larger than the input for short inputs (callers check).
 */
export function snipToolResult(
	content: string,
	options: { toolName: string; geometry: SnipGeometry; archivePath?: string },
): string {
	const { headLines, tailLines, headChars, tailChars } = options.geometry;
	const lines = splitLines(content);
	let head: string;
	let tail: string;
	if (lines.length > headLines + tailLines) {
		head = firstCharacters(lines.slice(0, headLines).join(""), headChars);
		tail = lastCharacters(tailLines > 0 ? lines.slice(-tailLines).join("") : "", tailChars);
	} else {
		const total = characterCount(content);
		head = firstCharacters(content, Math.min(headChars, Math.floor(total / 2)));
		tail = lastCharacters(content, Math.min(tailChars, Math.floor(total / 4)));
	}
	const middle = content.slice(head.length, content.length - tail.length);
	const name = options.toolName || "tool";
	const marker =
		`[snipped tool result — ${name} (${utf8Bytes(content)} bytes) archive=${options.archivePath ?? "none"} ` +
		`head=${splitLines(head).length} tail=${splitLines(tail).length}]`;
	const beforeOmitted = head === "" || head.endsWith("\n") ? "" : "\n";
	const omitted = omittedMarker(splitLines(middle).length, utf8Bytes(middle));
	return `${marker}\n${head}${beforeOmitted}${omitted}${tail === "" ? "" : "\n"}${tail}`;
}

/** Unicode code points in `text` (a surrogate pair counts once). */
export function characterCount(text: string): number {
	let count = 0;
	for (let index = 0; index < text.length; index += unitsAt(text, index)) count++;
	return count;
}

/** The first `count` code points of `text`. */
function firstCharacters(text: string, count: number): string {
	if (text.length <= count) return text;
	let index = 0;
	for (let seen = 0; seen < count && index < text.length; seen++) index += unitsAt(text, index);
	return text.slice(0, index);
}

/** The last `count` code points of `text`. */
function lastCharacters(text: string, count: number): string {
	if (text.length <= count) return text;
	let start = text.length;
	for (let seen = 0; seen < count && start > 0; seen++) start -= unitsBefore(text, start);
	return text.slice(start);
}

/** 2 when a surrogate pair starts at `index`, else 1. */
function unitsAt(text: string, index: number): number {
	return isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1)) ? 2 : 1;
}

/** 2 when a surrogate pair ends just before `end`, else 1. */
function unitsBefore(text: string, end: number): number {
	return end >= 2 && isLow(text.charCodeAt(end - 1)) && isHigh(text.charCodeAt(end - 2)) ? 2 : 1;
}

function isHigh(code: number): boolean {
	return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
	return code >= 0xdc00 && code <= 0xdfff;
}
