import {
	type Browser,
	type BrowserContext,
	chromium,
	type Frame,
	type Page,
	type Request,
	type Route,
} from "playwright-core";
import { ConsoleBuffer } from "./console-buffer.js";
import { findChromium } from "./find-chromium.js";
import type { PageState } from "./page-text.js";
import { type PolicyProxy, startPolicyProxy } from "./policy-proxy.js";
import { checkUrl, createUrlChecker, type HostLookup, type UrlPolicyOptions, type UrlVerdict } from "./url-policy.js";

/** Flags for a headless Chromium that stays quiet: no background traffic, no updates, no QUIC. */
export const CHROMIUM_ARGS: readonly string[] = [
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

/**
 * Flags that leave Chromium one way out, the policy proxy: every request goes through it (loopback too, which
 * Chromium would otherwise send directly), and no host resolves for a direct connection except the proxy's own
 * address (the resolver rules apply to IP literals as well).
 */
export function proxyArguments(proxy: { host: string; port: number }): string[] {
	return [
		`--proxy-server=http://${proxy.host}:${proxy.port}`,
		"--proxy-bypass-list=<-loopback>",
		`--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE ${proxy.host}`,
	];
}

export const VIEWPORT = { width: 1280, height: 800 } as const;
/** How long a navigation may take before the page is read as it is. */
export const NAVIGATION_TIMEOUT_MS = 30_000;

export interface BrowserSessionOptions {
	/** `browser.executablePath`; undefined looks in the usual places (see findChromium). */
	executablePath?: string;
	allowPrivate: boolean;
	/** More hosts refused like cloud-metadata ones (see UrlPolicyOptions.refuseHosts). */
	refuseHosts?: readonly string[];
	/** When set, the only hosts the browser may open (see UrlPolicyOptions.onlyHosts). */
	onlyHosts?: readonly string[];
	/** DNS for the URL policy and the proxy (tests pass a fake). */
	lookup?: HostLookup;
}

/** A refused URL the page tried to show in its main frame. */
export type Refusal = Extract<UrlVerdict, { allowed: false }>;

interface Launched {
	browser: Browser;
	context: BrowserContext;
	proxy: PolicyProxy;
}

/** A failure that is not the page's fault: no Chromium, a launch that failed. */
export interface BrowserUnavailable {
	error: string;
	code: "browser_not_installed" | "browser_launch_failed";
}

/** URL schemes a frame may be on without a policy check: nothing from the network is behind them. */
const LOCAL_SCHEMES = /^(about|chrome-error|data|blob):/i;
const WEB_SCHEMES = /^https?:/i;

const noop = () => {};

/** The first line of an error's message, without Playwright's "page.goto: " style prefix. */
export function errorLine(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	return (message.split("\n")[0] ?? "").replace(/^[a-zA-Z]+\.[a-zA-Z]+: /, "");
}

/**
 * One headless Chromium for one agent session: launched on first use, one context (viewport 1280×800, service workers
 * blocked so every request is seen), and the page the tools act on (the newest open tab).
 *
 * The URL policy is enforced before anything leaves the machine: Chromium's only way out is the policy proxy (see
 * startPolicyProxy), which refuses to connect to a refused host, so no redirect hop, preconnect, WebSocket or worker
 * request reaches one. On top of that, for reporting and as further lines of defence: every request is routed and
 * requests to refused hosts are aborted inside the browser; a redirect into a refused host (which routing does not
 * see: Playwright continues redirect hops itself) stops the frame's navigation; and `enforce` checks the URL every
 * frame is on after each action, sending a refused page to about:blank before anything is read from it.
 */
export class BrowserSession {
	readonly console = new ConsoleBuffer();
	private readonly checker: { check(url: string): Promise<UrlVerdict> };
	private readonly policy: UrlPolicyOptions;
	private launching: Promise<Launched | BrowserUnavailable> | undefined;
	private current: Page | undefined;
	private readonly refusals: Refusal[] = [];
	private readonly pending = new Set<Promise<unknown>>();

	constructor(private readonly options: BrowserSessionOptions) {
		this.policy = {
			allowPrivate: options.allowPrivate,
			refuseHosts: options.refuseHosts,
			onlyHosts: options.onlyHosts,
		};
		this.checker = createUrlChecker(this.policy, options.lookup);
	}

	/** True once a page has been opened (the browser was launched). */
	get started(): boolean {
		return this.launching !== undefined;
	}

	/** The policy's verdict on `url` (DNS verdicts are kept for the session). Never rejects. */
	check(url: string): Promise<UrlVerdict> {
		return this.checker.check(url);
	}

	/** The page to act on, launching Chromium on first use. Never rejects. */
	async page(): Promise<Page | BrowserUnavailable> {
		if (!this.launching) {
			this.launching = this.launch();
		}
		const launched = await this.launching;
		if ("error" in launched) {
			this.launching = undefined;
			return launched;
		}
		if (this.current && !this.current.isClosed()) return this.current;
		const open = launched.context.pages().filter((page) => !page.isClosed());
		const last = open.at(-1);
		if (last) {
			this.current = last;
			return last;
		}
		try {
			const page = await launched.context.newPage();
			this.current = page;
			return page;
		} catch (error) {
			this.launching = undefined;
			return { error: `the browser stopped working (${errorLine(error)}); try again`, code: "browser_launch_failed" };
		}
	}

	/** Closes the browser and its proxy. Never rejects; the next use launches a new one. */
	async close(): Promise<void> {
		const launching = this.launching;
		this.launching = undefined;
		this.current = undefined;
		if (!launching) return;
		const launched = await launching;
		if ("error" in launched) return;
		await launched.browser.close().catch(noop);
		await launched.proxy.close();
	}

	private async launch(): Promise<Launched | BrowserUnavailable> {
		const found = findChromium(this.options.executablePath);
		if ("error" in found) return { error: found.error, code: "browser_not_installed" };
		let proxy: PolicyProxy;
		try {
			proxy = await startPolicyProxy({ policy: this.policy, lookup: this.options.lookup });
		} catch (error) {
			return { error: `the browser's proxy did not start: ${errorLine(error)}`, code: "browser_launch_failed" };
		}
		let browser: Browser;
		try {
			browser = await chromium.launch({
				executablePath: found.path,
				headless: true,
				args: [...CHROMIUM_ARGS, ...proxyArguments(proxy)],
				timeout: 60_000,
			});
		} catch (error) {
			await proxy.close();
			return {
				error: `Chromium at ${found.path} did not start: ${errorLine(error)}; check the install or set browser.executablePath`,
				code: "browser_launch_failed",
			};
		}
		try {
			const context = await browser.newContext({
				viewport: { ...VIEWPORT },
				serviceWorkers: "block",
				acceptDownloads: false,
			});
			context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS);
			await context.route("**/*", (route) => this.route(route));
			context.on("page", (page) => this.attach(page));
			browser.on("disconnected", () => {
				this.launching = undefined;
				this.current = undefined;
				proxy.close().catch(noop);
			});
			return { browser, context, proxy };
		} catch (error) {
			await browser.close().catch(noop);
			await proxy.close();
			return { error: `Chromium did not open a page: ${errorLine(error)}`, code: "browser_launch_failed" };
		}
	}

	/**
	 * Every request but redirect hops passes here: requests to refused hosts are aborted before they leave the browser
	 * and reported; the rest go on to the policy proxy.
	 */
	private async route(route: Route): Promise<void> {
		const request = route.request();
		const url = request.url();
		if (WEB_SCHEMES.test(url)) {
			const verdict = await this.checker.check(url);
			if (!verdict.allowed) {
				this.noteRefused(request, verdict);
				await route.abort("blockedbyclient").catch(noop);
				return;
			}
		}
		await route.continue().catch(noop);
	}

	/** Records a refused request: a main-frame navigation becomes the action's error, anything else a console line. */
	private noteRefused(request: Request, verdict: Refusal): void {
		let mainFrame = false;
		try {
			const frame = request.frame();
			mainFrame = request.isNavigationRequest() && frame === frame.page().mainFrame();
		} catch {
			// a request without a frame (a worker's): not a page navigation
		}
		if (mainFrame) this.refusals.push(verdict);
		else this.console.add("refused", `${request.url()}: ${verdict.reason}`);
	}

	private attach(page: Page): void {
		this.current = page;
		page.on("console", (message) => {
			const type = message.type();
			if (type !== "error" && type !== "warning") return;
			const text = message.text();
			if (text.includes("net::ERR_BLOCKED_BY_CLIENT")) return; // reported as "refused" by route()
			const location = message.location();
			// A message about a refused URL (the "Failed to load resource" of a blocked redirect) would leak what that
			// page answered; the refusal itself is reported instead.
			if (WEB_SCHEMES.test(location.url) && !checkUrl(location.url, this.policy).allowed) {
				return;
			}
			const where = location.url ? ` (${location.url}:${location.lineNumber + 1})` : "";
			this.console.add(type, `${text}${where}`);
		});
		page.on("pageerror", (error) => {
			const at = (error.stack ?? "").split("\n").find((line) => line.trim().startsWith("at "));
			this.console.add("exception", `${error.name}: ${error.message}${at ? ` (${at.trim()})` : ""}`);
		});
		page.on("crash", () => {
			this.console.add("exception", "the page crashed; the next browser call opens a new one");
			page.close().catch(noop);
		});
		page.on("close", () => {
			if (this.current === page) this.current = undefined;
		});
		// Routing does not see the hops of a redirect (the proxy refused to open a refused one): stop a navigation whose
		// redirect leads somewhere refused, and report it.
		page.on("request", (request) => {
			if (!request.redirectedFrom() || !WEB_SCHEMES.test(request.url())) return;
			const pending = this.checker.check(request.url()).then(async (verdict) => {
				if (verdict.allowed) return;
				let frame: Frame | undefined;
				try {
					frame = request.isNavigationRequest() ? request.frame() : undefined;
				} catch {
					frame = undefined;
				}
				if (frame === page.mainFrame()) {
					this.refusals.push(verdict);
					await page.goto("about:blank").catch(noop);
				} else {
					this.console.add("refused", `redirect to ${request.url()}: ${verdict.reason}`);
					if (frame) await frame.goto("about:blank").catch(noop);
				}
			});
			this.track(pending);
		});
	}

	/**
	 * Lets redirect checks still running from earlier calls finish (and act) before a new navigation starts, and forgets
	 * what they refused: a late check must not blank the page the next call opens. Never rejects.
	 */
	async quiesce(): Promise<void> {
		while (this.pending.size > 0) await Promise.all([...this.pending]);
		this.refusals.length = 0;
	}

	private track(pending: Promise<unknown>): void {
		const settled = pending.catch(noop).finally(() => this.pending.delete(settled));
		this.pending.add(settled);
	}

	/**
	 * Applies the URL policy to what the page shows now. Waits for redirect checks still running; when the main frame
	 * tried to open or is on a refused URL, sends it to about:blank and returns the refusal (nothing of that page may
	 * be read). Subframes on refused URLs are blanked and noted in the console buffer; `framesRefused` counts those
	 * that could not be blanked. Never rejects.
	 */
	async enforce(page: Page): Promise<{ refusal?: Refusal; framesRefused: number }> {
		while (this.pending.size > 0) await Promise.all([...this.pending]);
		let refusal = this.refusals.shift();
		this.refusals.length = 0;
		const mainUrl = page.url();
		const mainVerdict = await this.landing(mainUrl);
		if (!mainVerdict.allowed) refusal = mainVerdict;
		if (refusal) {
			await page.goto("about:blank").catch(noop);
			return { refusal, framesRefused: 0 };
		}
		let framesRefused = 0;
		for (const frame of page.frames()) {
			if (frame === page.mainFrame() || frame.isDetached()) continue;
			const verdict = await this.landing(frame.url());
			if (verdict.allowed) continue;
			this.console.add("refused", `frame on ${verdict.url}: ${verdict.reason}`);
			await frame.goto("about:blank").catch(noop);
			if (!frame.isDetached() && !(await this.landing(frame.url())).allowed) framesRefused += 1;
		}
		return { framesRefused };
	}

	/** The verdict on a URL a frame is already on: local schemes pass, web ones go through the policy. */
	private async landing(url: string): Promise<UrlVerdict> {
		if (LOCAL_SCHEMES.test(url)) return { allowed: true, url };
		if (WEB_SCHEMES.test(url)) return this.checker.check(url);
		return { allowed: false, url, host: url, reason: `${url} is not an http or https page` };
	}

	/**
	 * The page's URL, title and visible text, read only while the page is on an allowed URL: the URL is checked before
	 * and after the read, and a read that raced a navigation is repeated. Never rejects.
	 */
	async read(page: Page): Promise<{ state: PageState } | { refusal: Refusal } | { error: string }> {
		let lastError = "the page kept navigating while it was read";
		for (let attempt = 0; attempt < 4; attempt++) {
			const { refusal } = await this.enforce(page);
			if (refusal) return { refusal };
			const before = page.url();
			try {
				const [title, text] = await Promise.all([
					page.title(),
					page.evaluate(
						"(document.body || document.documentElement) ? (document.body || document.documentElement).innerText : ''",
					),
				]);
				if (page.url() === before) return { state: { url: before, title, text: typeof text === "string" ? text : "" } };
			} catch (error) {
				lastError = errorLine(error);
				await page.waitForLoadState("domcontentloaded", { timeout: NAVIGATION_TIMEOUT_MS }).catch(noop);
			}
		}
		return { error: lastError };
	}

	/**
	 * Lets the page react to an action: waits for a navigation the action started to load (bounded), then for two
	 * animation frames so handlers and rendering have run. Never rejects.
	 */
	async settle(page: Page): Promise<void> {
		await page.waitForLoadState("load", { timeout: NAVIGATION_TIMEOUT_MS }).catch(noop);
		await nextFrames(page);
		await page.waitForLoadState("load", { timeout: NAVIGATION_TIMEOUT_MS }).catch(noop);
	}
}

/** Waits for two animation frames of `page` (so handlers and rendering have run), at most a second. Never rejects. */
export async function nextFrames(page: Page): Promise<void> {
	const frames = page
		.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")
		.catch(noop);
	let timer: NodeJS.Timeout | undefined;
	const bound = new Promise((done) => {
		timer = setTimeout(done, 1_000);
	});
	await Promise.race([frames, bound]).finally(() => clearTimeout(timer));
}
