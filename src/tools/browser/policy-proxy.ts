import type { LookupAddress } from "node:dns";
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, isIPv6, type LookupFunction, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import {
	addressRefusal,
	type HostLookup,
	hostRefusal,
	isIpLiteral,
	lookupAddresses,
	systemLookup,
	type UrlPolicyOptions,
} from "./url-policy.js";

// The browser's only way out: Chromium is launched with this proxy for every connection (loopback included), so a
// redirect hop, a preconnect, a WebSocket or a worker's request reaches the network only through the URL policy,
// checked here on the host and on every address it resolves to, before any connection to it is opened.

export interface PolicyProxyOptions {
	policy: UrlPolicyOptions;
	/** DNS for the policy and for the connection (tests pass a fake). */
	lookup?: HostLookup;
}

export interface PolicyProxy {
	/** Where it listens, on loopback. */
	readonly host: string;
	readonly port: number;
	/** Stops listening and cuts every connection still open. Never rejects. */
	close(): Promise<void>;
}

/** Where a proxied connection may go: the addresses it may connect to (all checked), or why it may not. */
export type Destination = { addresses: LookupAddress[] } | { refused: string } | { failed: string };

/**
 * Applies the URL policy to a host a connection is asked for: refused hosts and names that resolve to any refused
 * address are refused; otherwise the addresses to connect to (the literal itself, or what the name resolved to, each
 * checked). Never rejects.
 */
export async function resolveDestination(
	hostname: string,
	policy: UrlPolicyOptions,
	resolve: HostLookup = systemLookup,
): Promise<Destination> {
	const reason = hostRefusal(hostname, policy);
	if (reason) return { refused: reason };
	if (isIpLiteral(hostname)) {
		const address = hostname.replace(/^\[(.*)\]$/, "$1");
		return { addresses: [{ address, family: isIPv6(address) ? 6 : 4 }] };
	}
	const name = hostname.replace(/\.+$/, "");
	const resolved = await lookupAddresses(name, resolve);
	if (resolved.length === 0) return { failed: `${name} did not resolve` };
	for (const address of resolved) {
		const refusal = addressRefusal(address, policy, `${name} (which resolves to ${address})`);
		if (refusal) return { refused: refusal };
	}
	return { addresses: resolved.map((address) => ({ address, family: isIPv6(address) ? 6 : 4 })) };
}

/** A DNS lookup that answers with addresses already checked, so a connection cannot resolve the name again. */
function fixedLookup(addresses: LookupAddress[]): LookupFunction {
	return (_hostname, options, callback) => {
		const [first] = addresses;
		if (options.all) callback(null, addresses);
		else if (first) callback(null, first.address, first.family);
		else callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "", 4);
	};
}

/** Headers that belong to one connection, never forwarded (plus any the Connection header names). */
const HOP_BY_HOP = new Set([
	"connection",
	"proxy-connection",
	"keep-alive",
	"proxy-authorization",
	"proxy-authenticate",
	"te",
	"trailer",
	"transfer-encoding",
	"upgrade",
]);

/** A flat raw header list (as `rawHeaders`) without hop-by-hop headers; `keep` names ones to forward anyway. */
function endToEnd(raw: string[], keep: ReadonlySet<string> = new Set()): string[] {
	const named = new Set<string>();
	for (let index = 0; index + 1 < raw.length; index += 2) {
		if (raw[index]?.toLowerCase() !== "connection") continue;
		for (const token of (raw[index + 1] ?? "").split(",")) named.add(token.trim().toLowerCase());
	}
	const kept: string[] = [];
	for (let index = 0; index + 1 < raw.length; index += 2) {
		const name = raw[index] ?? "";
		const lower = name.toLowerCase();
		if (!keep.has(lower) && (HOP_BY_HOP.has(lower) || named.has(lower))) continue;
		kept.push(name, raw[index + 1] ?? "");
	}
	return kept;
}

/** The path and query of an absolute-form request target, byte for byte ("/" when it has none). */
function originForm(absolute: string): string {
	const rest = absolute.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/, "").replace(/#.*$/, "");
	return rest.startsWith("/") ? rest : `/${rest}`;
}

function answer(response: ServerResponse, status: number, text: string): void {
	if (response.headersSent) {
		response.destroy();
		return;
	}
	response.writeHead(status, {
		"content-type": "text/plain; charset=utf-8",
		"content-length": Buffer.byteLength(text),
		"x-snowpea-proxy": status === 403 ? "refused" : "failed",
	});
	response.end(text);
}

/** Ends a raw (CONNECT or upgrade) client socket with a short status line. */
function refuseSocket(socket: Duplex, status: 400 | 403 | 502, text: string): void {
	const phrase = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway" }[status];
	socket.end(
		`HTTP/1.1 ${status} ${phrase}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
	);
}

/** `host:port` of a CONNECT request, normalized by the URL parser like any other host. */
function parseAuthority(authority: string): { hostname: string; port: number } | undefined {
	try {
		const url = new URL(`http://${authority}`);
		if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return undefined;
		return { hostname: url.hostname, port: Number(url.port || 80) };
	} catch {
		return undefined;
	}
}

/**
 * Starts a forward proxy on 127.0.0.1 (a free port) that opens a connection only to hosts the URL policy allows:
 * plain http requests (absolute-form) are forwarded with their method, headers and body; CONNECT tunnels (https,
 * WebSockets) and upgrades are piped. A refused host gets 403 and no connection is attempted to it; one that does not
 * resolve or answer gets 502. The policy is applied to the resolved addresses, and the connection goes to those same
 * addresses (no second lookup). Rejects only when it cannot listen.
 */
export async function startPolicyProxy(options: PolicyProxyOptions): Promise<PolicyProxy> {
	const resolve = options.lookup ?? systemLookup;
	const destination = (hostname: string) => resolveDestination(hostname, options.policy, resolve);
	const agent = new Agent({ keepAlive: true });
	const tunnels = new Set<Duplex>();
	const track = (socket: Duplex) => {
		tunnels.add(socket);
		socket.once("close", () => tunnels.delete(socket));
	};

	const forward = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
		let target: URL;
		try {
			target = new URL(request.url ?? "");
		} catch {
			answer(response, 400, "this is the browser's proxy; it forwards absolute http:// requests only");
			return;
		}
		if (target.protocol !== "http:") {
			answer(response, 400, `this proxy forwards http:// requests only, not ${target.protocol}`);
			return;
		}
		const where = await destination(target.hostname);
		if (request.socket.destroyed) return;
		if ("refused" in where) return answer(response, 403, `refused by the browser's URL policy: ${where.refused}`);
		if ("failed" in where) return answer(response, 502, `could not open ${target.host}: ${where.failed}`);
		const headers = endToEnd(request.rawHeaders);
		if (!headers.some((_value, index) => index % 2 === 0 && headers[index]?.toLowerCase() === "host")) {
			headers.push("Host", target.host);
		}
		const upstream = httpRequest({
			host: target.hostname.replace(/^\[(.*)\]$/, "$1"),
			port: Number(target.port || 80),
			method: request.method,
			path: originForm(request.url ?? ""),
			headers,
			agent,
			lookup: fixedLookup(where.addresses),
		});
		upstream.on("response", (incoming) => {
			try {
				response.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEnd(incoming.rawHeaders));
			} catch (error) {
				incoming.destroy();
				answer(response, 502, `${target.host} answered with headers that cannot be passed on: ${String(error)}`);
				return;
			}
			incoming.pipe(response);
			incoming.on("error", () => response.destroy());
		});
		upstream.on("error", (error) => answer(response, 502, `could not open ${target.host}: ${error.message}`));
		response.on("close", () => {
			if (!response.writableFinished) upstream.destroy();
		});
		request.on("error", () => upstream.destroy());
		request.pipe(upstream);
	};

	/** Connects a raw client socket to an allowed host:port; once connected calls `opened`, then pipes both ways. */
	const tunnel = async (
		client: Duplex,
		hostname: string,
		port: number,
		head: Buffer,
		opened: (upstream: Socket) => void,
	): Promise<void> => {
		track(client);
		client.on("error", () => client.destroy());
		const where = await destination(hostname);
		if (client.destroyed) return;
		if ("refused" in where) return refuseSocket(client, 403, `refused by the browser's URL policy: ${where.refused}`);
		if ("failed" in where) return refuseSocket(client, 502, `could not open ${hostname}: ${where.failed}`);
		const upstream = connect({
			host: hostname.replace(/^\[(.*)\]$/, "$1"),
			port,
			lookup: fixedLookup(where.addresses),
		});
		track(upstream);
		upstream.once("connect", () => {
			opened(upstream);
			if (head.length > 0) upstream.write(head);
			upstream.pipe(client);
			client.pipe(upstream);
		});
		upstream.on("error", (error) => {
			if (upstream.connecting || upstream.pending)
				refuseSocket(client, 502, `could not open ${hostname}: ${error.message}`);
			else client.destroy();
		});
		client.on("close", () => upstream.destroy());
		upstream.on("close", () => client.destroy());
	};

	// No time limit on receiving a request (a slow upload): Chromium decides when to give up, as without a proxy.
	const server = createServer({ requestTimeout: 0 }, (request, response) => {
		forward(request, response).catch(() => response.destroy());
	});
	server.on("connect", (request: IncomingMessage, client: Duplex, head: Buffer) => {
		const authority = parseAuthority(request.url ?? "");
		if (!authority) return refuseSocket(client, 400, `${request.url} is not a host:port`);
		tunnel(client, authority.hostname, authority.port, head, () => {
			client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
		}).catch(() => client.destroy());
	});
	server.on("upgrade", (request: IncomingMessage, client: Duplex, head: Buffer) => {
		let target: URL;
		try {
			target = new URL(request.url ?? "");
		} catch {
			return refuseSocket(client, 400, "this proxy forwards absolute http:// requests only");
		}
		if (target.protocol !== "http:") return refuseSocket(client, 400, "this proxy forwards http:// requests only");
		const headers = endToEnd(request.rawHeaders, new Set(["connection", "upgrade"]));
		const lines = [`${request.method} ${originForm(request.url ?? "")} HTTP/1.1`];
		for (let index = 0; index + 1 < headers.length; index += 2) lines.push(`${headers[index]}: ${headers[index + 1]}`);
		tunnel(client, target.hostname, Number(target.port || 80), head, (upstream) => {
			upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
		}).catch(() => client.destroy());
	});
	server.on("clientError", (_error, socket) => socket.destroy());

	await new Promise<void>((resolveListen, rejectListen) => {
		server.once("error", rejectListen);
		server.listen(0, "127.0.0.1", () => {
			server.off("error", rejectListen);
			resolveListen();
		});
	});
	const address = server.address();
	const port = typeof address === "object" && address ? address.port : 0;
	let closing: Promise<void> | undefined;
	return {
		host: "127.0.0.1",
		port,
		close() {
			closing ??= new Promise<void>((done) => {
				server.close(() => done());
				server.closeAllConnections();
				for (const socket of tunnels) socket.destroy();
				agent.destroy();
			});
			return closing;
		},
	};
}
