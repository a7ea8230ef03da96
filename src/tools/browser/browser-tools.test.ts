import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tool, ToolContext, ToolResult } from "../tool.js";
import { createBrowserTools } from "./browser-tools.js";
import { findChromium } from "./find-chromium.js";

const root = mkdtempSync(join(tmpdir(), "snowpea-browser-"));
const context: ToolContext = {
	cwd: root,
	home: join(root, "home"),
	sessionId: "s",
	callId: "c",
	signal: new AbortController().signal,
	spillDir: join(root, "spill"),
};

function toolNamed(tools: Tool[], name: string): Tool {
	const tool = tools.find((candidate) => candidate.name === name);
	if (!tool) throw new Error(`no tool ${name}`);
	return tool;
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): { width: number; height: number } {
	expect(bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
	return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe("browser tools without Chromium", () => {
	it("answers a missing Chromium with the install hint and never downloads one", async () => {
		const browser = createBrowserTools({
			executablePath: join(root, "no-such-chromium"),
			attachmentDirectory: () => join(root, "attachments"),
			vision: () => true,
		});
		const result = await toolNamed(browser.tools, "browser_navigate").execute(
			JSON.stringify({ url: "http://127.0.0.1:9/" }),
			context,
		);
		expect(result.ok).toBe(false);
		expect(result.errorCode).toBe("browser_not_installed");
		expect(result.content).toContain(`no Chromium found at ${join(root, "no-such-chromium")}`);
		expect(result.content).toContain("apt-get install chromium");
		expect(result.content).toContain("browser.executablePath");
		await browser.close();
	});

	it("declares eight deferred network tools in the browser group", () => {
		const browser = createBrowserTools({ attachmentDirectory: () => root, vision: () => true });
		expect(browser.tools.map((tool) => tool.name)).toEqual([
			"browser_navigate",
			"browser_click",
			"browser_type",
			"browser_press",
			"browser_scroll",
			"browser_snapshot",
			"browser_screenshot",
			"browser_console",
		]);
		for (const tool of browser.tools) {
			expect(tool.group).toBe("browser");
			expect(tool.permission).toBe("network");
		}
	});

	it("refuses a cloud-metadata url before any browser is needed", async () => {
		const browser = createBrowserTools({
			executablePath: join(root, "no-such-chromium"),
			attachmentDirectory: () => root,
			vision: () => true,
		});
		const result = await toolNamed(browser.tools, "browser_navigate").execute(
			JSON.stringify({ url: "http://0251.0376.0251.0376/latest/meta-data/" }),
			context,
		);
		expect(result.errorCode).toBe("url_blocked");
		expect(result.content).toContain("169.254.169.254 is a cloud-metadata address");
	});
});

describe("browser tools in a session that may not open private addresses", () => {
	it("refuses loopback before launching anything", async () => {
		const browser = createBrowserTools({
			executablePath: join(root, "no-such-chromium"),
			attachmentDirectory: () => root,
			vision: () => true,
			allowPrivate: false,
		});
		const result = await toolNamed(browser.tools, "browser_navigate").execute(
			JSON.stringify({ url: "localhost:5173" }),
			context,
		);
		expect(result.errorCode).toBe("url_blocked");
		expect(result.content).toContain("localhost is a loopback or local name");
	});
});

const chromium = findChromium();
const skipReason = "error" in chromium ? ` (skipped: ${chromium.error})` : "";

/**
 * Pages the tests open. `/late` answers only when the test calls releaseLate(). WATCHED is replaced by the address of
 * the watched server: a second loopback server the policy refuses (it stands in for the metadata service), so any
 * connection that reaches it is a request the browser should never have made.
 */
const PAGES: Record<string, string> = {
	"/page": "<title>Hello page</title><body><h1>Welcome aboard</h1><p>The quick brown fox.</p></body>",
	"/click": `<title>Click</title><body><button id="go" onclick="document.getElementById('out').textContent='button was clicked'">Go</button><p id="out">waiting for a click</p></body>`,
	"/form": `<title>Form</title><body><form id="form"><input id="name" name="name"><button>Send</button></form><p id="out">nothing sent</p>
<script>document.getElementById('form').addEventListener('submit', (event) => { event.preventDefault(); document.getElementById('out').textContent = 'submitted: ' + document.getElementById('name').value; });</script></body>`,
	"/keys": `<title>Keys</title><body><p id="out">no key yet</p>
<script>let downAt; addEventListener('keydown', (event) => { if (downAt === undefined) downAt = performance.now(); });
addEventListener('keyup', (event) => { document.getElementById('out').textContent = 'held ' + event.key + ' for ' + Math.round(performance.now() - downAt) + ' ms'; downAt = undefined; });</script></body>`,
	"/long": `<title>Long</title><body style="margin:0"><p id="position" style="position:fixed;top:0;margin:0">scrollY=0</p><div style="height:6000px"></div>
<script>addEventListener('scroll', () => { document.getElementById('position').textContent = 'scrollY=' + Math.round(scrollY); });</script></body>`,
	"/console": `<title>Noisy</title><body><p>noisy page</p><script>console.error('widget failed to load'); console.warn('deprecated api used');</script></body>`,
	"/late": `<title>Late</title><body><p>late page</p><script>console.error('logged at load');
fetch('/held').then(() => { console.warn('late warning'); setTimeout(() => { throw new Error('late failure'); }); setTimeout(() => fetch('/done'), 0); });</script></body>`,
	"/shots": `<title>Shots</title><body style="margin:0"><div id="box" style="width:200px;height:120px;background:#c33"></div><p>tall</p><div style="height:3000px"></div></body>`,
	"/links": `<title>Links</title><body><a id="meta" href="http://0xa9fea9fe/latest/meta-data/">metadata</a><a id="watched" href="WATCHED/direct">watched</a>
<a id="hop" href="/redirect">hop</a><a id="chain" href="/chain">chain</a></body>`,
	"/socket": `<title>Socket</title><body><p>socket page</p>
<script>const socket = new WebSocket(location.origin.replace("http:", "ws:") + "/echo"); socket.onmessage = (event) => fetch("/socket-said-" + event.data);</script></body>`,
	"/hidden": `<title>Hidden requests</title><body><p>a page with requests routing does not see</p>
<link rel="preconnect" href="WATCHED"><img src="/image-redirect">
<script>const socket = new WebSocket("WATCHED/socket".replace("http:", "ws:")); socket.onclose = () => fetch("/socket-closed");</script></body>`,
};

/** Redirects the main server answers with: path → Location (WATCHED replaced as in PAGES). */
const REDIRECTS: Record<string, string> = {
	"/redirect": "WATCHED/latest/meta-data/",
	"/chain": "/chain-2",
	"/chain-2": "WATCHED/chained",
	"/image-redirect": "WATCHED/pixel.png",
};

describe.skipIf("error" in chromium)(`browser tools against a real Chromium${skipReason}`, () => {
	let server: Server;
	let base = "";
	let watchedServer: Server;
	let watched = "";
	let watchedConnections = 0;
	const sockets = new Set<Duplex>();
	const seen = new Map<string, () => void>();
	/** Resolves when the main server has been asked for `path` (register before the request can happen). */
	const requested = (path: string) =>
		new Promise<void>((resolve) => {
			seen.set(path, resolve);
		});
	// `/held` answers once released — also when the page's request arrives after the release (a loaded machine).
	let heldReleased = false;
	let heldResponse: { end(text: string): void } | undefined;
	const releaseHeld = () => {
		heldReleased = true;
		heldResponse?.end("ok");
	};
	let doneSeen: Promise<void> = Promise.resolve();
	let markDone: () => void = () => {};
	let vision = true;
	const attachments = join(root, "attachments");
	const browser = createBrowserTools({
		attachmentDirectory: () => attachments,
		vision: () => vision,
		refuseHosts: ["localhost"],
		// Chromium's own background requests (component updates, autofill) are refused by the proxy before any DNS.
		onlyHosts: ["127.0.0.1", "localhost"],
	});
	const call = (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> =>
		toolNamed(browser.tools, name).execute(JSON.stringify(args), context);

	beforeAll(async () => {
		watchedServer = createServer((_request, response) => {
			response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
			response.end("<title>Watched</title>watched secret");
		});
		watchedServer.on("connection", () => {
			watchedConnections += 1;
		});
		await new Promise<void>((resolve) => watchedServer.listen(0, "127.0.0.1", resolve));
		watched = `http://localhost:${(watchedServer.address() as AddressInfo).port}`;

		server = createServer((request, response) => {
			const path = request.url ?? "/";
			seen.get(path)?.();
			const location = REDIRECTS[path];
			if (location) {
				response.writeHead(302, { location: location.replace("WATCHED", watched) });
				response.end();
				return;
			}
			if (path === "/held") {
				if (heldReleased) response.end("ok");
				else heldResponse = response;
				return;
			}
			if (path === "/done") {
				markDone();
				response.end("ok");
				return;
			}
			const page = PAGES[path];
			response.writeHead(page ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
			response.end(page?.replaceAll("WATCHED", watched) ?? "<title>Missing</title>not found");
		});
		// A WebSocket endpoint that greets and stays open (the handshake by hand: RFC 6455, section 4.2.2).
		server.on("upgrade", (request, socket) => {
			const key = String(request.headers["sec-websocket-key"] ?? "");
			const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
			socket.write(
				`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
			);
			socket.write(Buffer.from([0x81, 5, ...Buffer.from("hello")]));
			socket.on("error", () => socket.destroy());
			sockets.add(socket);
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});

	afterAll(async () => {
		await browser.close();
		for (const socket of sockets) socket.destroy();
		for (const each of [server, watchedServer]) {
			each.closeAllConnections();
			await new Promise((resolve) => each.close(resolve));
		}
	});

	it("navigates and returns the title, url and visible text", async () => {
		const result = await call("browser_navigate", { url: `${base}/page` });
		expect(result.ok).toBe(true);
		expect(result.content).toContain("Title: Hello page");
		expect(result.content).toContain(`URL: ${base}/page`);
		expect(result.content).toContain("Welcome aboard");
		expect(result.content).toContain("The quick brown fox.");
		expect(result.content).not.toContain("Console errors:");
	});

	it("clicks a button and shows the changed text", async () => {
		await call("browser_navigate", { url: `${base}/click` });
		const result = await call("browser_click", { selector: "#go" });
		expect(result.ok).toBe(true);
		expect(result.content).toContain("clicked #go");
		expect(result.content).toContain("button was clicked");
		const missing = await call("browser_click", { selector: "#absent" });
		expect(missing.ok).toBe(false);
		expect(missing.content).toContain("no element matches #absent");
	});

	it("types into a field and submits the form", async () => {
		await call("browser_navigate", { url: `${base}/form` });
		const result = await call("browser_type", { selector: "#name", text: "Ada Lovelace", submit: true });
		expect(result.ok).toBe(true);
		expect(result.content).toContain("submitted: Ada Lovelace");
	});

	it("holds a key down for hold_ms", async () => {
		await call("browser_navigate", { url: `${base}/keys` });
		const result = await call("browser_press", { key: "d", hold_ms: 300 });
		expect(result.ok).toBe(true);
		const held = /held d for (\d+) ms/.exec(result.content);
		expect(held, result.content).not.toBeNull();
		expect(Number(held?.[1])).toBeGreaterThanOrEqual(250);
		const tap = await call("browser_press", { key: "space" });
		expect(tap.ok).toBe(true);
		expect(tap.content).toContain("pressed Space");
	});

	it("scrolls the page", async () => {
		await call("browser_navigate", { url: `${base}/long` });
		const result = await call("browser_scroll", { delta_y: 900 });
		expect(result.ok).toBe(true);
		const shown = /scrollY=(\d+)/.exec(result.content);
		expect(Number(shown?.[1])).toBeGreaterThan(0);
		const back = await call("browser_scroll", { delta_y: -5000 });
		expect(back.content).toContain("scrollY=0");
	});

	it("reports console errors after the call that saw them, exactly once", async () => {
		const first = await call("browser_navigate", { url: `${base}/console` });
		expect(first.ok).toBe(true);
		const block = first.content.slice(first.content.indexOf("Console errors:"));
		expect(block).toContain("Console errors:");
		expect(block).toContain("[error] widget failed to load");
		expect(block).toContain("[warning] deprecated api used");
		const second = await call("browser_snapshot");
		expect(second.content).toContain("noisy page");
		expect(second.content).not.toContain("Console errors:");
		expect(second.content).not.toContain("widget failed to load");
	});

	it("browser_console returns what was logged since the last report", async () => {
		doneSeen = new Promise((resolve) => {
			markDone = resolve;
		});
		const first = await call("browser_navigate", { url: `${base}/late` });
		expect(first.content).toContain("logged at load");
		releaseHeld();
		await doneSeen;
		const report = await call("browser_console");
		expect(report.ok).toBe(true);
		expect(report.content).toContain("[warning] late warning");
		expect(report.content).toContain("[exception] Error: late failure");
		expect(report.content).not.toContain("logged at load");
		const again = await call("browser_console");
		expect(again.content).toContain("no console errors");
	});

	it("attaches a 1280×800 viewport screenshot and an element screenshot of the element's size", async () => {
		await call("browser_navigate", { url: `${base}/shots` });
		const viewport = await call("browser_screenshot");
		expect(viewport.ok, viewport.content).toBe(true);
		expect(viewport.content).toMatch(/^image attached: \S+\.png 1280×800 image\/png \(\d+ KB\)$/);
		const [shot] = viewport.images ?? [];
		expect(shot?.path.startsWith(attachments)).toBe(true);
		expect(pngSize(readFileSync(shot?.path ?? ""))).toEqual({ width: 1280, height: 800 });

		const element = await call("browser_screenshot", { selector: "#box" });
		expect(element.ok, element.content).toBe(true);
		const [box] = element.images ?? [];
		expect(pngSize(readFileSync(box?.path ?? ""))).toEqual({ width: 200, height: 120 });

		const full = await call("browser_screenshot", { full_page: true });
		const [page] = full.images ?? [];
		expect(page?.height).toBeGreaterThan(page?.width ?? 0);
	});

	it("refuses a screenshot on a text-only model and points at browser_snapshot", async () => {
		vision = false;
		try {
			const result = await call("browser_screenshot");
			expect(result.ok).toBe(false);
			expect(result.content).toContain("browser_snapshot");
			expect(result.images).toBeUndefined();
		} finally {
			vision = true;
		}
	});

	it("refuses a redirect into a refused host before any request reaches it, and reads nothing", async () => {
		const result = await call("browser_navigate", { url: `${base}/redirect` });
		expect(result.ok).toBe(false);
		expect(result.errorCode).toBe("url_blocked");
		expect(result.content).toContain(`${watched}/latest/meta-data/`);
		expect(result.content).toContain("nothing from that page was read");
		expect(result.content).not.toMatch(/Title:|URL:|watched secret/);
		expect(watchedConnections).toBe(0);
		const after = await call("browser_snapshot");
		expect(after.content).toContain("URL: about:blank");
	});

	it("refuses the second hop of a redirect chain without contacting it", async () => {
		const result = await call("browser_navigate", { url: `${base}/chain` });
		expect(result.errorCode).toBe("url_blocked");
		expect(result.content).toContain(`${watched}/chained`);
		expect(result.content).not.toContain("watched secret");
		expect(watchedConnections).toBe(0);
	});

	it("refuses a click that lands on a refused host, directly or through redirects, without contacting it", async () => {
		await call("browser_navigate", { url: `${base}/links` });
		const direct = await call("browser_click", { selector: "#meta" });
		expect(direct.ok).toBe(false);
		expect(direct.errorCode).toBe("url_blocked");
		expect(direct.content).toContain("169.254.169.254");
		for (const selector of ["#watched", "#hop", "#chain"]) {
			await call("browser_navigate", { url: `${base}/links` });
			const clicked = await call("browser_click", { selector });
			expect(clicked.ok, selector).toBe(false);
			expect(clicked.errorCode, selector).toBe("url_blocked");
			expect(clicked.content, selector).not.toMatch(/Title:|URL:|watched secret/);
		}
		expect(watchedConnections).toBe(0);
	});

	it("still lets a page talk to an allowed WebSocket (through the proxy)", async () => {
		const greeted = requested("/socket-said-hello");
		const result = await call("browser_navigate", { url: `${base}/socket` });
		expect(result.ok, result.content).toBe(true);
		await greeted;
	});

	it("never connects to a refused host for a subresource redirect, a preconnect or a WebSocket", async () => {
		const socketClosed = requested("/socket-closed");
		const result = await call("browser_navigate", { url: `${base}/hidden` });
		expect(result.ok, result.content).toBe(true);
		expect(result.content).toContain("a page with requests routing does not see");
		await socketClosed;
		const report = await call("browser_console");
		expect(`${result.content}\n${report.content}`).toContain(`[refused] redirect to ${watched}/pixel.png`);
		expect(watchedConnections).toBe(0);
	});
});
