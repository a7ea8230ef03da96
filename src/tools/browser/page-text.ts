/** Characters of page text a navigate or snapshot result shows. */
export const PAGE_TEXT_LIMIT = 20_000;
/** Characters of page text shown after click, type, press and scroll. */
export const EXCERPT_LIMIT = 1_500;

/** What the page shows: the URL it is on, its title and its visible text (innerText of the body). */
export interface PageState {
	url: string;
	title: string;
	text: string;
}

/** Page text tidied for the model: no carriage returns, no trailing spaces, at most one blank line in a row. */
export function tidyText(text: string): string {
	return text
		.replace(/\r\n?/g, "\n")
		.replace(/[ \t\u00a0]+$/gm, "")
		.replace(/\n{3,}/g, "\n\n")
		.trim();
}

/** `text` cut to `limit` characters (never inside a surrogate pair) with a note saying how much was left out. */
export function capText(text: string, limit: number, note: (shown: number, total: number) => string): string {
	if (text.length <= limit) return text;
	let end = limit;
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end -= 1;
	return `${text.slice(0, end)}\n${note(end, text.length)}`;
}

const number = (value: number) => value.toLocaleString("en-US");

/**
 * "Title: …\nURL: …\n\n<text>" with the text cut at `limit` characters. `excerpt` true says the cut text is an
 * excerpt that browser_snapshot shows in full.
 */
export function formatPageState(state: PageState, options: { limit: number; excerpt: boolean }): string {
	const text = tidyText(state.text);
	const body =
		text === ""
			? "(the page shows no text)"
			: capText(text, options.limit, (shown, total) =>
					options.excerpt
						? `… (${number(total - shown)} more characters; browser_snapshot shows up to ${number(PAGE_TEXT_LIMIT)})`
						: `… (page text cut at ${number(shown)} of ${number(total)} characters)`,
				);
	return `Title: ${state.title === "" ? "(none)" : state.title}\nURL: ${state.url}\n\n${body}`;
}
