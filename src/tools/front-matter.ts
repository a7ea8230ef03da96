/** A front-matter value: the scalar text (continuation lines joined), and the items of a "- item" list under it. */
export interface FieldValue {
	scalar: string;
	items: string[];
}

/**
 * Splits `---` front matter from a Markdown file (SKILL.md, .snowpea/agents/*.md), parsed minimally: `key: value`
 * lines (keys lower-cased, surrounding quotes dropped, a `>`/`|` block marker read as an empty start), indented lines
 * continuing the previous value, and `- item` lines collected under it, until the next `---` line; the rest is the
 * body, trimmed. Undefined when the file does not open with front matter. Pure.
 */
export function splitFrontMatter(text: string): { fields: Map<string, FieldValue>; body: string } | undefined {
	const lines = text
		.replace(/^\uFEFF/, "")
		.replace(/\r\n?/g, "\n")
		.split("\n");
	if (lines[0]?.trimEnd() !== "---") return undefined;
	const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === "---");
	if (end < 0) return undefined;
	const fields = new Map<string, FieldValue>();
	let current: FieldValue | undefined;
	for (const line of lines.slice(1, end)) {
		const field = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
		if (field) {
			const value = (field[2] as string).trim();
			current = { scalar: /^[>|][+-]?$/.test(value) ? "" : unquote(value), items: [] };
			fields.set((field[1] as string).toLowerCase(), current);
			continue;
		}
		const item = /^\s*-\s+(.*)$/.exec(line);
		if (item && current) current.items.push(unquote((item[1] as string).trim()));
		else if (current && /^\s/.test(line) && line.trim() !== "") {
			current.scalar = current.scalar === "" ? line.trim() : `${current.scalar} ${line.trim()}`;
		}
	}
	return {
		fields,
		body: lines
			.slice(end + 1)
			.join("\n")
			.trim(),
	};
}

/** A value without the quotes around it. */
export function unquote(value: string): string {
	return value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]
		? value.slice(1, -1)
		: value;
}
