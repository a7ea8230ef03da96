/** Lower-case spellings models use for keys, mapped to Playwright's key names. */
const ALIASES: Record<string, string> = {
	space: "Space",
	spacebar: "Space",
	ctrl: "Control",
	control: "Control",
	cmd: "Meta",
	command: "Meta",
	meta: "Meta",
	super: "Meta",
	win: "Meta",
	alt: "Alt",
	option: "Alt",
	shift: "Shift",
	enter: "Enter",
	return: "Enter",
	esc: "Escape",
	escape: "Escape",
	tab: "Tab",
	backspace: "Backspace",
	del: "Delete",
	delete: "Delete",
	insert: "Insert",
	home: "Home",
	end: "End",
	pageup: "PageUp",
	pagedown: "PageDown",
	up: "ArrowUp",
	down: "ArrowDown",
	left: "ArrowLeft",
	right: "ArrowRight",
	arrowup: "ArrowUp",
	arrowdown: "ArrowDown",
	arrowleft: "ArrowLeft",
	arrowright: "ArrowRight",
};

/**
 * A key or combination ("w", "ArrowUp", "space", "Control+a", "ctrl+shift+Z") as Playwright key names, modifiers
 * first in the order given and the key last: ["Control", "a"]. "space" and " " become "Space"; F-keys and common
 * lower-case names are recognized; single characters keep their case. An empty part is an error. Pure.
 */
export function parseKeyCombination(input: string): { keys: string[] } | { error: string } {
	if (input === "") return { error: "the key is empty" };
	const parts =
		input === "+" ? ["+"] : input.endsWith("++") ? [...input.slice(0, -2).split("+"), "+"] : input.split("+");
	const keys: string[] = [];
	for (const part of parts) {
		if (part === " ") {
			keys.push("Space");
			continue;
		}
		const trimmed = part.trim();
		if (trimmed === "") return { error: `"${input}" has an empty key; write combinations like Control+a` };
		if (trimmed.length === 1) {
			keys.push(trimmed);
			continue;
		}
		const lower = trimmed.toLowerCase();
		const alias = ALIASES[lower];
		if (alias) keys.push(alias);
		else if (/^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) keys.push(lower.toUpperCase());
		else keys.push(trimmed);
	}
	return { keys };
}
