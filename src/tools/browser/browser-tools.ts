import type { Page } from "playwright-core";
import { z } from "zod";
import { imageSummary, storeImage } from "../attachments.js";
import { defineTool, failure, type Tool, type ToolContext, type ToolResult } from "../tool.js";
import {
	BrowserSession,
	errorLine,
	NAVIGATION_TIMEOUT_MS,
	nextFrames,
	type Refusal,
	VIEWPORT,
} from "./browser-session.js";
import { formatConsoleBlock } from "./console-buffer.js";
import { parseKeyCombination } from "./keys.js";
import { EXCERPT_LIMIT, formatPageState, PAGE_TEXT_LIMIT } from "./page-text.js";
import { parseBrowserUrl } from "./url-policy.js";

export interface BrowserToolsOptions {
	/** `browser.executablePath`; default /usr/bin/chromium, else chromium or chromium-browser on PATH. */
	executablePath?: string;
	/** The session's attachment store (screenshots go there). */
	attachmentDirectory: () => string;
	/** Whether the current model can see images. */
	vision: () => boolean;
	/** Loopback and LAN addresses may be opened (CLI sessions): default true. Cloud metadata is refused regardless. */
	allowPrivate?: boolean;
	/** More hosts refused like cloud-metadata ones (tests stand a loopback server in for the metadata service). */
	refuseHosts?: readonly string[];
	/** When set, the only hosts the browser may open; Chromium's own background requests included (tests). */
	onlyHosts?: readonly string[];
}

/** The deferred group every browser tool belongs to. */
export const BROWSER_GROUP = "browser";
/** Longest key hold browser_press accepts, in milliseconds. */
export const MAX_HOLD_MS = 10_000;
/** How long click, type and an element screenshot wait for their element to exist. */
const ELEMENT_ATTACH_TIMEOUT_MS = 3_000;
/** How long they then wait for it to be visible, enabled and still. */
const ELEMENT_TIMEOUT_MS = 10_000;

const noop = () => {};

/**
 * The browser tool group for one session: browser_navigate, browser_click, browser_type, browser_press,
 * browser_scroll, browser_snapshot, browser_screenshot and browser_console, sharing one headless Chromium page that
 * is launched on first use (never downloaded). Calls run one at a time, in the order they arrive. Every result ends
 * with a "Console errors:" block when the page logged errors or warnings since the previous call (each reported
 * once). `close` shuts the browser; it never rejects.
 */
export function createBrowserTools(options: BrowserToolsOptions): { tools: Tool[]; close(): Promise<void> } {
	const session = new BrowserSession({
		executablePath: options.executablePath,
		allowPrivate: options.allowPrivate ?? true,
		refuseHosts: options.refuseHosts,
		onlyHosts: options.onlyHosts,
	});
	let queue: Promise<unknown> = Promise.resolve();
	let screenshots = 0;

	/** Runs browser work one call at a time, and appends the console block to whatever it returns. */
	const serialized = (
		name: string,
		context: ToolContext,
		work: () => Promise<ToolResult>,
		withConsole = true,
	): Promise<ToolResult> => {
		const run = queue.then(async () => {
			if (context.signal.aborted) return failure("aborted", `${name}: aborted`);
			const result = await work().catch((error: unknown) =>
				failure("tool_failed", `${name} failed: ${errorLine(error)}`),
			);
			return withConsole ? appendConsole(session, result) : result;
		});
		queue = run.catch(noop);
		return run;
	};

	/** The page to act on; an error result when no page was opened yet or Chromium is missing. */
	const openPage = async (name: string, launch: boolean): Promise<Page | ToolResult> => {
		if (!launch && !session.started) {
			return failure("no_page", `${name}: no page is open yet; open one with browser_navigate`);
		}
		const page = await session.page();
		if ("error" in page) return failure(page.code, `${name}: ${page.error}`);
		return page;
	};

	/** The page after an action: URL, title and an excerpt (or the refusal when it landed on a refused URL). */
	const afterAction = async (name: string, page: Page, summary: string): Promise<ToolResult> => {
		await session.settle(page);
		const read = await session.read(page);
		if ("refusal" in read) return refused(name, read.refusal);
		if ("error" in read) return failure("tool_failed", `${summary}, but the page could not be read: ${read.error}`);
		return {
			ok: true,
			content: `${summary}\n${formatPageState(read.state, { limit: EXCERPT_LIMIT, excerpt: true })}`,
			display: `${summary} — ${read.state.url}`,
			details: { url: read.state.url, title: read.state.title },
		};
	};

	const group = { permission: "network" as const, group: BROWSER_GROUP };

	const navigate = defineTool({
		name: "browser_navigate",
		description: [
			"Open a url in the browser (one page per session) and return its title, url and visible text (up to 20,000",
			"characters). A url without a scheme gets https:// (http:// for localhost and IP addresses). Only http and",
			"https; cloud-metadata addresses are always refused.",
		].join(" "),
		parameters: z.object({
			url: z.string().min(1).describe("The page to open, e.g. http://localhost:5173/ or example.org."),
		}),
		readOnly: true,
		...group,
		run: (args, context) =>
			serialized("browser_navigate", context, async () => {
				const parsed = parseBrowserUrl(args.url);
				if ("error" in parsed) return failure("url_blocked", `browser_navigate: ${parsed.error}`);
				const verdict = await session.check(parsed.url.href);
				if (!verdict.allowed) return refused("browser_navigate", verdict, false);
				const page = await openPage("browser_navigate", true);
				if (!isPage(page)) return page;
				let status: number | undefined;
				let statusText = "";
				let note = "";
				await session.quiesce();
				const open = () => page.goto(parsed.url.href, { waitUntil: "load", timeout: NAVIGATION_TIMEOUT_MS });
				try {
					// A navigation an earlier call left running (a late redirect check blanking the page) may interrupt this
					// one: when nothing was refused, open the page once more.
					const response = await open().catch(async (error: unknown) => {
						if (!/interrupted by another navigation/i.test(errorLine(error))) throw error;
						await session.quiesce();
						return open();
					});
					status = response?.status();
					statusText = response?.statusText() ?? "";
				} catch (error) {
					const { refusal } = await session.enforce(page);
					if (refusal) return refused("browser_navigate", refusal);
					const line = errorLine(error);
					if (!/timeout/i.test(line) || page.url() === "about:blank") {
						return failure("navigation_failed", `browser_navigate: could not open ${parsed.url.href}: ${line}`);
					}
					note = `(the page had not finished loading after ${NAVIGATION_TIMEOUT_MS / 1000} s; this is what it shows so far)\n`;
				}
				const read = await session.read(page);
				if ("refusal" in read) return refused("browser_navigate", read.refusal);
				if ("error" in read)
					return failure("tool_failed", `browser_navigate: the page could not be read: ${read.error}`);
				const statusLine = status !== undefined && status >= 400 ? `${`HTTP ${status} ${statusText}`.trim()}\n` : "";
				return {
					ok: true,
					content: `${statusLine}${note}${formatPageState(read.state, { limit: PAGE_TEXT_LIMIT, excerpt: false })}`,
					display: `opened ${read.state.url}${read.state.title ? ` — ${read.state.title}` : ""}`,
					details: { url: read.state.url, title: read.state.title, status },
				};
			}),
	});

	const click = defineTool({
		name: "browser_click",
		description:
			"Click the first element matching a CSS selector (Playwright selectors such as text=Sign in work too), then return the page's url, title and a text excerpt.",
		parameters: z.object({ selector: z.string().min(1).describe('CSS selector, e.g. "button#start" or "text=Next".') }),
		readOnly: false,
		...group,
		run: (args, context) =>
			serialized("browser_click", context, async () => {
				const page = await openPage("browser_click", false);
				if (!isPage(page)) return page;
				const locator = page.locator(args.selector).first();
				try {
					await locator.waitFor({ state: "attached", timeout: ELEMENT_ATTACH_TIMEOUT_MS });
					await locator.click({ timeout: ELEMENT_TIMEOUT_MS });
				} catch (error) {
					return elementFailure("browser_click", "click", page, args.selector, error);
				}
				return afterAction("browser_click", page, `clicked ${args.selector}`);
			}),
	});

	const type = defineTool({
		name: "browser_type",
		description:
			"Fill a form field (input, textarea or contenteditable) matching a CSS selector with text, replacing what it held; submit: true presses Enter afterwards. Returns the page's url, title and a text excerpt.",
		parameters: z.object({
			selector: z.string().min(1).describe("CSS selector of the field."),
			text: z.string().describe("The text to put in the field."),
			submit: z.boolean().optional().describe("Press Enter after typing (submits most forms)."),
		}),
		readOnly: false,
		...group,
		run: (args, context) =>
			serialized("browser_type", context, async () => {
				const page = await openPage("browser_type", false);
				if (!isPage(page)) return page;
				const locator = page.locator(args.selector).first();
				try {
					await locator.waitFor({ state: "attached", timeout: ELEMENT_ATTACH_TIMEOUT_MS });
					await locator.fill(args.text, { timeout: ELEMENT_TIMEOUT_MS });
					if (args.submit) await locator.press("Enter", { timeout: ELEMENT_TIMEOUT_MS });
				} catch (error) {
					return elementFailure("browser_type", "type into", page, args.selector, error);
				}
				const summary = `typed ${args.text.length} characters into ${args.selector}${args.submit ? " and pressed Enter" : ""}`;
				return afterAction("browser_type", page, summary);
			}),
	});

	const press = defineTool({
		name: "browser_press",
		description: [
			"Press a key or combination on the page, with no selector (w, ArrowUp, Space, Enter, Control+a). hold_ms",
			"holds it down that long before releasing (0–10,000), e.g. to move a character in a game; modifiers go down",
			"first and come up last. Returns the page's url, title and a text excerpt.",
		].join(" "),
		parameters: z.object({
			key: z.string().min(1).describe("Key name or combination: a, ArrowLeft, Space, Enter, Shift+Tab, Control+a."),
			hold_ms: z
				.number()
				.int()
				.min(0)
				.max(MAX_HOLD_MS)
				.optional()
				.describe("Milliseconds to hold the key down (default 0: a tap)."),
		}),
		readOnly: false,
		...group,
		run: (args, context) =>
			serialized("browser_press", context, async () => {
				const parsed = parseKeyCombination(args.key);
				if ("error" in parsed) return failure("invalid_arguments", `browser_press: ${parsed.error}`);
				const page = await openPage("browser_press", false);
				if (!isPage(page)) return page;
				const hold = args.hold_ms ?? 0;
				const pressed: string[] = [];
				try {
					if (hold === 0) {
						await page.keyboard.press(parsed.keys.join("+"));
					} else {
						for (const key of parsed.keys) {
							await page.keyboard.down(key);
							pressed.push(key);
						}
						await sleep(hold, context.signal);
					}
				} catch (error) {
					return failure("invalid_arguments", `browser_press: could not press ${args.key}: ${errorLine(error)}`);
				} finally {
					for (const key of pressed.reverse()) await page.keyboard.up(key).catch(noop);
				}
				if (context.signal.aborted) return failure("aborted", `browser_press: aborted while holding ${args.key}`);
				const summary =
					hold === 0 ? `pressed ${parsed.keys.join("+")}` : `held ${parsed.keys.join("+")} for ${hold} ms`;
				return afterAction("browser_press", page, summary);
			}),
	});

	const scroll = defineTool({
		name: "browser_scroll",
		description:
			"Scroll the page vertically with the mouse wheel over the middle of the viewport (negative delta_y scrolls up), then return the scroll position, url, title and a text excerpt.",
		parameters: z.object({
			delta_y: z.number().int().min(-100_000).max(100_000).optional().describe("Pixels to scroll; default 600 (down)."),
		}),
		readOnly: true,
		...group,
		run: (args, context) =>
			serialized("browser_scroll", context, async () => {
				const page = await openPage("browser_scroll", false);
				if (!isPage(page)) return page;
				const delta = args.delta_y ?? 600;
				const size = page.viewportSize() ?? VIEWPORT;
				await page.mouse.move(size.width / 2, size.height / 2).catch(noop);
				await page.mouse.wheel(0, delta);
				const position = await waitForScrollToStop(page);
				const where = position
					? `scrolled by ${delta} px: now at y=${Math.round(position.y)} of ${Math.round(position.height)} px (viewport ${position.viewport} px tall)`
					: `scrolled by ${delta} px`;
				return afterAction("browser_scroll", page, where);
			}),
	});

	const snapshot = defineTool({
		name: "browser_snapshot",
		description: "Return the current page's url, title and visible text (up to 20,000 characters).",
		parameters: z.object({}),
		readOnly: true,
		...group,
		run: (_args, context) =>
			serialized("browser_snapshot", context, async () => {
				const page = await openPage("browser_snapshot", false);
				if (!isPage(page)) return page;
				const read = await session.read(page);
				if ("refusal" in read) return refused("browser_snapshot", read.refusal);
				if ("error" in read)
					return failure("tool_failed", `browser_snapshot: the page could not be read: ${read.error}`);
				return {
					ok: true,
					content: formatPageState(read.state, { limit: PAGE_TEXT_LIMIT, excerpt: false }),
					display: `snapshot of ${read.state.url}`,
					details: { url: read.state.url, title: read.state.title },
				};
			}),
	});

	const screenshot = defineTool({
		name: "browser_screenshot",
		description: [
			"Capture the page as a PNG and attach it as an image you can see: the viewport (1280×800) by default,",
			"the whole page with full_page, or the first element matching selector. Large captures are downscaled.",
		].join(" "),
		parameters: z.object({
			full_page: z.boolean().optional().describe("Capture the whole scrollable page instead of the viewport."),
			selector: z.string().min(1).optional().describe("Capture only the first element matching this CSS selector."),
		}),
		readOnly: true,
		...group,
		run: (args, context) =>
			serialized("browser_screenshot", context, async () => {
				if (!options.vision()) {
					return failure(
						"no_vision",
						"browser_screenshot: this model cannot see images; use browser_snapshot for the page text and browser_console for its errors, or switch to a vision-capable model",
					);
				}
				if (args.selector !== undefined && args.full_page) {
					return failure("invalid_arguments", "browser_screenshot: give either full_page or selector, not both");
				}
				const page = await openPage("browser_screenshot", false);
				if (!isPage(page)) return page;
				const before = await session.enforce(page);
				if (before.refusal) return refused("browser_screenshot", before.refusal);
				if (before.framesRefused > 0) {
					return failure(
						"url_blocked",
						"browser_screenshot: a frame on the page shows a refused address; no screenshot was taken",
					);
				}
				const url = page.url();
				let bytes: Buffer;
				try {
					if (args.selector !== undefined) {
						const locator = page.locator(args.selector).first();
						await locator.waitFor({ state: "attached", timeout: ELEMENT_ATTACH_TIMEOUT_MS });
						bytes = await locator.screenshot({ type: "png", timeout: ELEMENT_TIMEOUT_MS });
					} else {
						bytes = await page.screenshot({ type: "png", fullPage: args.full_page ?? false });
					}
				} catch (error) {
					if (args.selector !== undefined)
						return elementFailure("browser_screenshot", "capture", page, args.selector, error);
					return failure("tool_failed", `browser_screenshot: the capture failed: ${errorLine(error)}`);
				}
				const after = await session.enforce(page);
				if (after.refusal) return refused("browser_screenshot", after.refusal);
				if (page.url() !== url || after.framesRefused > 0) {
					return failure("page_changed", "browser_screenshot: the page navigated during the capture; try again");
				}
				screenshots += 1;
				const stored = await storeImage(
					{ bytes, name: `browser-screenshot-${screenshots}.png` },
					{ directory: options.attachmentDirectory() },
				);
				if ("error" in stored) return failure("attachment_failed", `browser_screenshot: ${stored.error}`);
				const line = `image attached: ${imageSummary(stored)}`;
				return {
					ok: true,
					content: line,
					display: line,
					images: [stored],
					details: { url, fullPage: args.full_page ?? false, selector: args.selector, path: stored.path },
				};
			}),
	});

	const consoleTool = defineTool({
		name: "browser_console",
		description:
			"Return the page's console errors and warnings and its uncaught exceptions since they were last reported (each is reported once; the last 50 are kept).",
		parameters: z.object({}),
		readOnly: true,
		...group,
		run: (_args, context) =>
			serialized(
				"browser_console",
				context,
				async () => {
					const block = formatConsoleBlock(session.console.drain());
					if (block !== "")
						return { ok: true, content: block, display: `${block.split("\n").length - 1} console lines` };
					const content = session.started
						? "no console errors, warnings or uncaught exceptions since the last report"
						: "no page is open yet, so nothing was logged; open one with browser_navigate";
					return { ok: true, content, display: "no console errors" };
				},
				false,
			),
	});

	return {
		tools: [navigate, click, type, press, scroll, snapshot, screenshot, consoleTool],
		close: () => session.close(),
	};
}

function isPage(value: Page | ToolResult): value is Page {
	return !("ok" in value && "content" in value);
}

/** Appends the console block (errors since the previous browser call) to a result. */
function appendConsole(session: BrowserSession, result: ToolResult): ToolResult {
	const block = formatConsoleBlock(session.console.drain());
	return block === "" ? result : { ...result, content: `${result.content}\n\n${block}` };
}

/** The error for a page that tried to show a refused URL: nothing from that page is included. */
function refused(name: string, refusal: Refusal, landed = true): ToolResult {
	const message = landed
		? `${name}: the page moved to ${refusal.url}, which is refused — ${refusal.reason}. The browser went back to about:blank and nothing from that page was read.`
		: `${name}: url_blocked: ${refusal.reason}`;
	return { ok: false, content: message, errorCode: "url_blocked", details: { url: refusal.url, host: refusal.host } };
}

/** A click, fill or element capture that failed: says whether anything matched, else the browser's reason. */
async function elementFailure(
	name: string,
	verb: string,
	page: Page,
	selector: string,
	error: unknown,
): Promise<ToolResult> {
	const count = await page
		.locator(selector)
		.count()
		.catch(() => undefined);
	if (count === 0) {
		return failure("no_element", `${name}: no element matches ${selector}; browser_snapshot shows what the page holds`);
	}
	const message = error instanceof Error ? error.message : String(error);
	const lines = message.split("\n").map((line) => line.trim());
	const reason =
		lines
			.filter((line) => line.startsWith("- "))
			.at(-1)
			?.slice(2) ?? errorLine(error);
	return failure(
		"element_failed",
		`${name}: could not ${verb} ${selector}: ${errorLine(error)}${reason !== errorLine(error) ? ` (${reason})` : ""}`,
	);
}

/** Waits `milliseconds`, or less when `signal` aborts. Never rejects. */
function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
	return new Promise((done) => {
		if (signal.aborted) return done();
		const onAbort = () => {
			clearTimeout(timer);
			done();
		};
		const timer = setTimeout(() => {
			signal.removeEventListener("abort", onAbort);
			done();
		}, milliseconds);
		signal.addEventListener("abort", onAbort, { once: true });
	});
}

/** Waits (bounded, about a second) until the scroll position stops moving; returns it, or undefined if unreadable. */
async function waitForScrollToStop(page: Page): Promise<{ y: number; height: number; viewport: number } | undefined> {
	const read = async () => {
		const value = await page
			.evaluate("[window.scrollY, document.documentElement.scrollHeight, window.innerHeight]")
			.catch(() => undefined);
		return Array.isArray(value) && value.length === 3 && value.every((item) => typeof item === "number")
			? { y: value[0] as number, height: value[1] as number, viewport: value[2] as number }
			: undefined;
	};
	let previous = await read();
	for (let frame = 0; frame < 30; frame++) {
		await nextFrames(page);
		const now = await read();
		if (now && previous && now.y === previous.y && frame >= 1) return now;
		previous = now;
	}
	return previous;
}
