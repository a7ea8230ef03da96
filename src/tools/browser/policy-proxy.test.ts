import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PolicyProxy, resolveDestination, startPolicyProxy } from "./policy-proxy.js";
import type { HostLookup } from "./url-policy.js";

const fakeLookup =
	(table: Record<string, string[]>): HostLookup =>
	async (hostname) => {
		const addresses = table[hostname];
		if (!addresses) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
		return addresses;
	};

/** A loopback server that counts the TCP connections it accepted and echoes what it was sent. */
async function countingServer(): Promise<{ server: Server; port: number; connections: () => number }> {
	let connections = 0;
	const server = createServer((incoming, response) => {
		const chunks: Buffer[] = [];
		incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
		incoming.on("end", () => {
			response.writeHead(200, { "content-type": "application/json", "x-upstream": "yes" });
			response.end(
				JSON.stringify({
					method: incoming.method,
					url: incoming.url,
					host: incoming.headers.host,
					custom: incoming.headers["x-custom"],
					proxyConnection: incoming.headers["proxy-connection"] ?? null,
					body: Buffer.concat(chunks).toString("utf8"),
				}),
			);
		});
	});
	server.on("connection", () => {
		connections += 1;
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** Sends one request through the proxy (absolute-form target); resolves with the status, headers and body. */
function viaProxy(
	proxy: PolicyProxy,
	target: string,
	init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
	return new Promise((resolve, reject) => {
		const outgoing = request({
			host: proxy.host,
			port: proxy.port,
			method: init.method ?? "GET",
			path: target,
			headers: { host: new URL(target).host, "proxy-connection": "keep-alive", ...init.headers },
			agent: false,
		});
		outgoing.on("response", (response) => {
			const chunks: Buffer[] = [];
			response.on("data", (chunk: Buffer) => chunks.push(chunk));
			response.on("end", () =>
				resolve({
					status: response.statusCode ?? 0,
					headers: response.headers,
					body: Buffer.concat(chunks).toString("utf8"),
				}),
			);
		});
		outgoing.on("error", reject);
		outgoing.end(init.body);
	});
}

/** Opens a CONNECT tunnel through the proxy; resolves with the status and, when it is 200, the socket. */
function tunnelVia(proxy: PolicyProxy, authority: string): Promise<{ status: number; socket: Socket }> {
	return new Promise((resolve, reject) => {
		const outgoing = request({ host: proxy.host, port: proxy.port, method: "CONNECT", path: authority, agent: false });
		outgoing.on("connect", (response, socket) => resolve({ status: response.statusCode ?? 0, socket }));
		outgoing.on("error", reject);
		outgoing.end();
	});
}

describe("policy proxy", () => {
	let upstream: Awaited<ReturnType<typeof countingServer>>;
	let proxy: PolicyProxy;
	let strict: PolicyProxy;

	beforeAll(async () => {
		upstream = await countingServer();
		const lookup = fakeLookup({
			"app.example": ["127.0.0.1"],
			"sneaky.example": ["127.0.0.1"],
			localhost: ["127.0.0.1"],
		});
		// localhost stands in for a metadata address: refused, yet harmless (loopback) if a bug let it through.
		proxy = await startPolicyProxy({ policy: { allowPrivate: true, refuseHosts: ["localhost"] }, lookup });
		strict = await startPolicyProxy({ policy: { allowPrivate: false }, lookup });
	});

	afterAll(async () => {
		await proxy.close();
		await strict.close();
		upstream.server.closeAllConnections();
		await new Promise((resolve) => upstream.server.close(resolve));
	});

	it("forwards an allowed request with its method, headers and body, without the proxy's own headers", async () => {
		const target = `http://127.0.0.1:${upstream.port}/submit?x=1`;
		const answer = await viaProxy(proxy, target, { method: "POST", body: "name=Ada", headers: { "x-custom": "kept" } });
		expect(answer.status).toBe(200);
		expect(answer.headers["x-upstream"]).toBe("yes");
		expect(JSON.parse(answer.body)).toEqual({
			method: "POST",
			url: "/submit?x=1",
			host: `127.0.0.1:${upstream.port}`,
			custom: "kept",
			proxyConnection: null,
			body: "name=Ada",
		});
	});

	it("connects to the address the name was checked at, keeping the Host header", async () => {
		const answer = await viaProxy(proxy, `http://app.example:${upstream.port}/`);
		expect(answer.status).toBe(200);
		expect(JSON.parse(answer.body).host).toBe(`app.example:${upstream.port}`);
	});

	it("refuses a refused host with 403 and never connects to it", async () => {
		const before = upstream.connections();
		const answer = await viaProxy(proxy, `http://localhost:${upstream.port}/latest/meta-data/`);
		expect(answer.status).toBe(403);
		expect(answer.body).toContain("localhost is on this session's list of refused hosts");
		const tunnel = await tunnelVia(proxy, `localhost:${upstream.port}`);
		expect(tunnel.status).toBe(403);
		tunnel.socket.destroy();
		expect(upstream.connections()).toBe(before);
	});

	it("refuses a name whose resolved address is refused, before connecting", async () => {
		const refusing = await startPolicyProxy({
			policy: { allowPrivate: true, refuseHosts: ["127.0.0.1"] },
			lookup: fakeLookup({ "sneaky.example": ["127.0.0.1"] }),
		});
		try {
			const before = upstream.connections();
			const answer = await viaProxy(refusing, `http://sneaky.example:${upstream.port}/`);
			expect(answer.status).toBe(403);
			expect(answer.body).toContain("sneaky.example (which resolves to 127.0.0.1)");
			expect(upstream.connections()).toBe(before);
		} finally {
			await refusing.close();
		}
	});

	it("refuses loopback in a session that may not open private addresses", async () => {
		const before = upstream.connections();
		const answer = await viaProxy(strict, `http://127.0.0.1:${upstream.port}/`);
		expect(answer.status).toBe(403);
		expect(answer.body).toContain("private, loopback or local address");
		expect(upstream.connections()).toBe(before);
	});

	it("tunnels CONNECT to an allowed host", async () => {
		const tunnel = await tunnelVia(proxy, `127.0.0.1:${upstream.port}`);
		expect(tunnel.status).toBe(200);
		const reply = await new Promise<string>((resolve) => {
			let text = "";
			tunnel.socket.on("data", (chunk: Buffer) => {
				text += chunk.toString("utf8");
				if (text.includes("}")) resolve(text);
			});
			tunnel.socket.write(`GET /through HTTP/1.1\r\nHost: tunnel.test\r\nConnection: close\r\n\r\n`);
		});
		tunnel.socket.destroy();
		expect(reply).toMatch(/^HTTP\/1\.1 200/);
		expect(reply).toContain('"url":"/through"');
	});

	it("answers a name that does not resolve with 502", async () => {
		const answer = await viaProxy(proxy, "http://nowhere.invalid/");
		expect(answer.status).toBe(502);
		expect(answer.body).toContain("nowhere.invalid did not resolve");
	});
});

describe("resolveDestination", () => {
	const lookup = fakeLookup({
		"evil.example": ["93.184.216.34", "169.254.169.254"],
		"good.example": ["93.184.216.34"],
	});

	it("refuses metadata in every spelling the URL parser normalizes, and names resolving to it", async () => {
		for (const host of ["169.254.169.254", "metadata.google.internal", "[::ffff:a9fe:a9fe]", "[fd00:ec2::254]"]) {
			expect(await resolveDestination(host, { allowPrivate: true }, lookup), host).toHaveProperty("refused");
		}
		expect(await resolveDestination(new URL("http://0xa9fea9fe/").hostname, { allowPrivate: true }, lookup)).toEqual({
			refused: "169.254.169.254 is a cloud-metadata address; the browser never opens it",
		});
		const evil = await resolveDestination("evil.example", { allowPrivate: true }, lookup);
		expect(evil).toEqual({
			refused:
				"evil.example (which resolves to 169.254.169.254) is a cloud-metadata address; the browser never opens it",
		});
	});

	it("gives the checked addresses of an allowed host", async () => {
		expect(await resolveDestination("good.example", { allowPrivate: false }, lookup)).toEqual({
			addresses: [{ address: "93.184.216.34", family: 4 }],
		});
		expect(await resolveDestination("[::1]", { allowPrivate: true }, lookup)).toEqual({
			addresses: [{ address: "::1", family: 6 }],
		});
	});
});
