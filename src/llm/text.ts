// Pure text helpers shared by the tools and the context engine. No I/O; every function is total (never throws).

/** Size of `text` encoded as UTF-8, in bytes. A lone surrogate counts 3 bytes, as the encoder writes U+FFFD. */
export function utf8Bytes(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/** UTF-8 size of the UTF-16 unit at `index`, and how many units that character spans (2 for a surrogate pair). */
function characterAt(text: string, index: number): { bytes: number; units: number } {
	const code = text.charCodeAt(index);
	if (code < 0x80) return { bytes: 1, units: 1 };
	if (code < 0x800) return { bytes: 2, units: 1 };
	if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
		const next = text.charCodeAt(index + 1);
		if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
	}
	return { bytes: 3, units: 1 };
}

/** UTF-8 size of the character that ends just before `end`, and how many units it spans. */
function characterBefore(text: string, end: number): { bytes: number; units: number } {
	const code = text.charCodeAt(end - 1);
	if (code >= 0xdc00 && code <= 0xdfff && end >= 2) {
		const previous = text.charCodeAt(end - 2);
		if (previous >= 0xd800 && previous <= 0xdbff) return { bytes: 4, units: 2 };
	}
	return characterAt(text, end - 1);
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`.
 * Never splits a character or a surrogate pair; returns "" when `maxBytes` ≤ 0.
 */
export function clipBytes(text: string, maxBytes: number): string {
	if (maxBytes <= 0) return "";
	if (text.length * 3 <= maxBytes) return text;
	let bytes = 0;
	let index = 0;
	while (index < text.length) {
		const character = characterAt(text, index);
		if (bytes + character.bytes > maxBytes) break;
		bytes += character.bytes;
		index += character.units;
	}
	return text.slice(0, index);
}

/**
 * The longest suffix of `text` whose UTF-8 encoding fits in `maxBytes`.
 * Never splits a character or a surrogate pair; returns "" when `maxBytes` ≤ 0.
 */
export function clipBytesEnd(text: string, maxBytes: number): string {
	if (maxBytes <= 0) return "";
	if (text.length * 3 <= maxBytes) return text;
	let bytes = 0;
	let end = text.length;
	while (end > 0) {
		const character = characterBefore(text, end);
		if (bytes + character.bytes > maxBytes) break;
		bytes += character.bytes;
		end -= character.units;
	}
	return text.slice(end);
}

// CSI (ESC [ or the 8-bit 0x9B), OSC (ESC ] … BEL or ESC \), and the other two- or three-byte escapes.
const ANSI_PATTERN =
	/(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[P^_][^\u001b]*(?:\u001b\\)?|\u001b[ -/]*[0-~]/g;

/** Removes ANSI escape sequences (colours, cursor moves, titles, hyperlinks). Other text is left unchanged. */
export function stripAnsi(text: string): string {
	return text.includes("\u001b") || text.includes("\u009b") ? text.replace(ANSI_PATTERN, "") : text;
}

export interface HeadTailOptions {
	/** Budget in UTF-8 bytes for the kept head and tail together; the marker line comes on top. */
	maxBytes: number;
	/** At most this many whole lines from the start (default: as many as fit). */
	headLines?: number;
	/** At most this many whole lines from the end (default: as many as fit). */
	tailLines?: number;
	/** Share of `maxBytes` offered to the head first, 0…1 (default 0.3: a failing build's error is at the end). */
	headShare?: number;
	/** Builds the marker line (no line break) from what was left out. Default: "[… N lines (B bytes) omitted]". */
	marker?: (omittedLines: number, omittedBytes: number) => string;
}

export interface HeadTailResult {
	/** head + marker line + tail, or the input unchanged when nothing was cut. */
	text: string;
	/** Lines left out, counting a partly kept line when a single huge line was cut by bytes. */
	omittedLines: number;
	/** UTF-8 bytes left out. */
	omittedBytes: number;
	truncated: boolean;
}

/** The default marker line. */
export function omittedMarker(omittedLines: number, omittedBytes: number): string {
	return `[… ${omittedLines} ${omittedLines === 1 ? "line" : "lines"} (${omittedBytes} bytes) omitted]`;
}

/**
 * Shortens `text` to lines from its start and its end around a marker line.
 * The head is offered `headShare` of the budget first, the tail gets everything the head left, and any rest goes back
 * to the head. Whole lines are kept; only when not one whole line fits at an end (a huge first or last line, or one
 * huge line) is that end's line cut by bytes instead, and the marker then stands on a line of its own.
 * Contract: the head is a prefix and the tail a suffix of `text`; the result is at most `maxBytes` plus the marker
 * line and one line break; characters and surrogate pairs are never split. Never throws.
 */
export function headTail(text: string, options: HeadTailOptions): HeadTailResult {
	const maxBytes = Math.max(0, Math.floor(options.maxBytes));
	const headLimit = options.headLines ?? Number.POSITIVE_INFINITY;
	const tailLimit = options.tailLines ?? Number.POSITIVE_INFINITY;
	const share = Math.min(1, Math.max(0, options.headShare ?? 0.3));
	const marker = options.marker ?? omittedMarker;
	const totalBytes = utf8Bytes(text);
	const lines = splitLines(text);
	if (totalBytes <= maxBytes && lines.length <= headLimit + tailLimit) {
		return { text, omittedLines: 0, omittedBytes: 0, truncated: false };
	}
	const sizes = lines.map(utf8Bytes);
	const lastIndex = lines.length - 1;

	// Head: whole lines within its share, else the start of the first line (one byte goes to the line break after it).
	let headCount = 0;
	let used = 0;
	while (headCount < lines.length && headCount < headLimit && used + sizes[headCount]! <= maxBytes * share) {
		used += sizes[headCount]!;
		headCount++;
	}
	let headPart = "";
	if (headCount === 0 && headLimit > 0) {
		headPart = clipBytes(lines[0]!, Math.floor(maxBytes * share) - 1);
		if (headPart !== "") used = utf8Bytes(headPart) + 1;
	}
	const firstFree = headCount + (headPart === "" ? 0 : 1);

	// Tail: whole lines within what is left, else the end of the last line.
	let tailCount = 0;
	while (
		tailCount < lines.length - firstFree &&
		tailCount < tailLimit &&
		used + sizes[lastIndex - tailCount]! <= maxBytes
	) {
		used += sizes[lastIndex - tailCount]!;
		tailCount++;
	}
	let tailPart = "";
	if (tailCount === 0 && tailLimit > 0) {
		const available =
			headPart !== "" && lastIndex === 0
				? lines[0]!.slice(headPart.length)
				: lastIndex >= firstFree
					? lines[lastIndex]!
					: "";
		tailPart = clipBytesEnd(available, maxBytes - used);
		used += utf8Bytes(tailPart);
	}

	// What the tail left goes back to the head: more whole lines, or more of a cut first line.
	if (headPart !== "" && lastIndex > 0) {
		const before = utf8Bytes(headPart);
		headPart = clipBytes(lines[0]!, maxBytes - (used - before));
		used += utf8Bytes(headPart) - before;
		if (headPart === lines[0]) {
			// The whole first line fits after all.
			headPart = "";
			headCount = 1;
			used -= 1;
		}
	}
	if (headPart === "") {
		const end = lines.length - tailCount - (tailPart === "" ? 0 : 1);
		while (headCount < end && headCount < headLimit && used + sizes[headCount]! <= maxBytes) {
			used += sizes[headCount]!;
			headCount++;
		}
	}

	const head = headPart === "" ? lines.slice(0, headCount).join("") : `${headPart}\n`;
	const tail = tailPart === "" ? lines.slice(lines.length - tailCount).join("") : tailPart;
	const omittedLines = lines.length - headCount - tailCount;
	const omittedBytes = totalBytes - utf8Bytes(head) + (headPart === "" ? 0 : 1) - utf8Bytes(tail);
	return {
		text: `${head}${marker(omittedLines, omittedBytes)}${tail === "" ? "" : "\n"}${tail}`,
		omittedLines,
		omittedBytes,
		truncated: true,
	};
}

/** Splits after each "\n", keeping the line breaks; "" gives no lines. */
export function splitLines(text: string): string[] {
	if (text === "") return [];
	const lines: string[] = [];
	let start = 0;
	for (;;) {
		const end = text.indexOf("\n", start);
		if (end === -1) break;
		lines.push(text.slice(start, end + 1));
		start = end + 1;
	}
	if (start < text.length) lines.push(text.slice(start));
	return lines;
}

/** Levenshtein distance: insertions, deletions and substitutions, each costing 1 (for "did you mean" lists). */
export function editDistance(a: string, b: string): number {
	let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
	for (let i = 1; i <= a.length; i++) {
		const current = [i];
		for (let j = 1; j <= b.length; j++) {
			const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
			current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
		}
		previous = current;
	}
	return previous[b.length] as number;
}
