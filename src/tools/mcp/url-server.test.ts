import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tool, ToolContext } from "../tool.js";
import { loadMcpConfig } from "./config.js";
import { McpManager } from "./manager.js";

const context: ToolContext = {
	cwd: "/tmp",
	home: "/tmp/home",
	sessionId: "s",
	callId: "c",
	signal: new AbortController().signal,
	spillDir: "/tmp/spill",
};

/** A stateless streamable-HTTP MCP server on 127.0.0.1 whose one tool echoes the Authorization header it got. */
function startServer(port = 0): Promise<Server> {
	const http = createServer((request, response) => {
		const server = new McpServer({ name: "web-test-server", version: "1.0.0" });
		server.registerTool("whoami", { description: "Says who is calling." }, async () => ({
			content: [{ type: "text", text: `authorization: ${request.headers.authorization ?? "none"}` }],
		}));
		const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
		response.on("close", () => {
			void transport.close();
			void server.close();
		});
		server
			.connect(transport)
			.then(() => transport.handleRequest(request, response))
			.catch(() => response.destroy());
	});
	return new Promise((resolve) => http.listen(port, "127.0.0.1", () => resolve(http)));
}

describe("McpManager with a url server", () => {
	let http: Server;
	let manager: McpManager;
	let tools: Tool[];

	beforeAll(async () => {
		http = await startServer();
		const { port } = http.address() as AddressInfo;
		const config = loadMcpConfig({
			environment: { WEB_TOKEN: "secret-token" },
			settingsServers: {
				web: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer \${WEB_TOKEN}` } },
			},
		});
		manager = McpManager.fromConfig(config, {
			cwd: "/tmp",
			attachmentDirectory: () => "/tmp/attachments",
			vision: () => true,
		});
		tools = await manager.tools();
	});
	afterAll(async () => {
		await manager.close();
		http.closeAllConnections();
		await new Promise((resolve) => http.close(resolve));
	});

	it("lists and calls its tools over streamable HTTP, sending the configured headers", async () => {
		expect(manager.warnings).toEqual([]);
		expect(tools.map((tool) => [tool.name, tool.group])).toEqual([["mcp__web__whoami", "mcp:web"]]);
		const result = await tools[0]?.execute("{}", context);
		expect(result).toMatchObject({ ok: true, content: "authorization: Bearer secret-token" });
	});

	it("fails a call while the server is down, then works again once it is back", async () => {
		const { port } = http.address() as AddressInfo;
		http.closeAllConnections();
		await new Promise((resolve) => http.close(resolve));
		const down = await tools[0]?.execute("{}", context);
		expect(down).toMatchObject({ ok: false });
		expect(down?.content).toMatch(/^mcp__web__whoami: MCP server web: fetch failed \(.+\)$/);
		http = await startServer(port);
		const back = await tools[0]?.execute("{}", context);
		expect(back).toMatchObject({ ok: true, content: "authorization: Bearer secret-token" });
	});
});
