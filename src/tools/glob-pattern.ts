// Glob patterns compiled to regular expressions over "/"-separated relative paths.
// Supported: `*` (within one path segment), `**` (any number of segments, as a whole segment), `?`, `{a,b}` (nested),
// character classes `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`, and `\` to escape. `*` and `?` match dotfiles too.

/** Most alternatives one pattern may expand to; a larger brace product is kept literal past this point. */
const MAX_EXPANSIONS = 1024;

/** True when `segment` uses any glob syntax. */
export function hasMagic(segment: string): boolean {
	return /[*?[{\\]/.test(segment);
}

/** Index of the `}` closing the `{` at `open`, or -1. */
function closingBrace(pattern: string, open: number): number {
	let depth = 0;
	for (let index = open; index < pattern.length; index++) {
		const character = pattern[index];
		if (character === "\\") index++;
		else if (character === "{") depth++;
		else if (character === "}" && --depth === 0) return index;
	}
	return -1;
}

/** Splits the body of a brace group at its top-level commas. */
function splitAlternatives(body: string): string[] {
	const parts: string[] = [];
	let depth = 0;
	let start = 0;
	for (let index = 0; index < body.length; index++) {
		const character = body[index];
		if (character === "\\") index++;
		else if (character === "{") depth++;
		else if (character === "}") depth--;
		else if (character === "," && depth === 0) {
			parts.push(body.slice(start, index));
			start = index + 1;
		}
	}
	parts.push(body.slice(start));
	return parts;
}

/** Expands `{a,b}` groups (nested too) into plain patterns: "x.{ts,js}" → ["x.ts", "x.js"]. */
export function expandBraces(pattern: string): string[] {
	for (let index = 0; index < pattern.length; index++) {
		const character = pattern[index];
		if (character === "\\") {
			index++;
			continue;
		}
		if (character !== "{") continue;
		const close = closingBrace(pattern, index);
		if (close === -1) return [pattern];
		const prefix = pattern.slice(0, index);
		const suffix = pattern.slice(close + 1);
		const results: string[] = [];
		for (const alternative of splitAlternatives(pattern.slice(index + 1, close))) {
			for (const expanded of expandBraces(`${prefix}${alternative}${suffix}`)) {
				if (results.length >= MAX_EXPANSIONS) return results;
				results.push(expanded);
			}
		}
		return results;
	}
	return [pattern];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** One path segment (no "/", no braces) as a regular expression source. */
function segmentSource(segment: string): string {
	let source = "";
	for (let index = 0; index < segment.length; index++) {
		const character = segment[index]!;
		if (character === "\\") {
			index++;
			source += escapeRegExp(segment[index] ?? "\\");
		} else if (character === "*") {
			while (segment[index + 1] === "*") index++;
			source += "[^/]*";
		} else if (character === "?") {
			source += "[^/]";
		} else if (character === "[") {
			const end = classEnd(segment, index);
			if (end === -1) {
				source += "\\[";
				continue;
			}
			let body = segment.slice(index + 1, end);
			const negated = body.startsWith("!") || body.startsWith("^");
			if (negated) body = body.slice(1);
			const inner = body.replace(/\\(.)/g, "$1").replace(/[\\\]^[]/g, "\\$&");
			source += negated ? `[^/${inner}]` : `[${inner}]`;
			index = end;
		} else {
			source += escapeRegExp(character);
		}
	}
	return source;
}

/** Index of the `]` closing the class opened at `open` (a `]` right after `[`, `[!` or `[^` is literal), or -1. */
function classEnd(segment: string, open: number): number {
	let index = open + 1;
	if (segment[index] === "!" || segment[index] === "^") index++;
	if (segment[index] === "]") index++;
	for (; index < segment.length; index++) {
		if (segment[index] === "\\") index++;
		else if (segment[index] === "]") return index;
	}
	return -1;
}

/** A brace-free pattern as a regular expression source matching a whole relative path. */
function patternSource(pattern: string): string {
	const segments = pattern.split("/").filter((segment, index, all) => !(segment === "**" && all[index - 1] === "**"));
	const last = segments.length - 1;
	let source = "";
	segments.forEach((segment, index) => {
		if (segment === "**") {
			if (segments.length === 1) source += ".*";
			else if (index === 0) source += "(?:.*/)?";
			else if (index === last) source += "/.*";
			else source += "(?:/.*)?";
			return;
		}
		if (index > 0 && !(index === 1 && segments[0] === "**")) source += "/";
		source += segmentSource(segment);
	});
	return source;
}

/** Removes "./" at the start and "/" at the end, and collapses repeated "/". */
export function normalizePattern(pattern: string): string {
	let result = pattern.replace(/\/{2,}/g, "/");
	while (result.startsWith("./")) result = result.slice(2);
	while (result.length > 1 && result.endsWith("/")) result = result.slice(0, -1);
	return result;
}

/** Compiles a glob to a RegExp that must match a whole "/"-separated relative path. */
export function globToRegExp(pattern: string): RegExp {
	const alternatives = expandBraces(normalizePattern(pattern)).map(patternSource);
	return new RegExp(`^(?:${alternatives.join("|")})$`, "s");
}
