// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${NAME} references, as users write them in .mcp.json
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expandVariables, loadMcpConfig } from "./config.js";

const roots: string[] = [];
function projectWith(mcpJson?: string): string {
	const root = mkdtempSync(join(tmpdir(), "snowpea-mcp-config-"));
	roots.push(root);
	if (mcpJson !== undefined) writeFileSync(join(root, ".mcp.json"), mcpJson);
	return root;
}

afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("loadMcpConfig", () => {
	it("merges .mcp.json with the settings, the settings winning a name clash, sorted by name", () => {
		const root = projectWith(
			JSON.stringify({
				mcpServers: {
					zeta: { command: "zeta-server", args: ["--stdio"] },
					shared: { command: "from-project" },
				},
			}),
		);
		const config = loadMcpConfig({
			projectDirectory: root,
			settingsServers: {
				shared: { command: "from-settings", env: { TOKEN: "t" } },
				alpha: { url: "https://mcp.example.com/mcp" },
			},
		});
		expect(config.warnings).toEqual([]);
		expect(config.servers.map((server) => server.name)).toEqual(["alpha", "shared", "zeta"]);
		expect(config.servers[1]).toEqual({
			name: "shared",
			origin: "settings (mcp.servers)",
			transport: { kind: "stdio", command: "from-settings", args: [], env: { TOKEN: "t" } },
		});
		expect(config.servers[2]).toMatchObject({
			origin: join(root, ".mcp.json"),
			transport: { kind: "stdio", command: "zeta-server", args: ["--stdio"], env: {} },
		});
		expect(config.servers[0]?.transport).toEqual({ kind: "http", url: "https://mcp.example.com/mcp", headers: {} });
	});

	it("accepts Claude Code's .mcp.json entries with a type field, including legacy SSE", () => {
		const root = projectWith(
			JSON.stringify({
				mcpServers: {
					local: { type: "stdio", command: "local-server" },
					remote: { type: "http", url: "http://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer x" } },
					old: { type: "sse", url: "https://old.example.com/sse" },
				},
			}),
		);
		const config = loadMcpConfig({ projectDirectory: root });
		expect(config.warnings).toEqual([]);
		expect(config.servers.map((server) => [server.name, server.transport.kind])).toEqual([
			["local", "stdio"],
			["old", "sse"],
			["remote", "http"],
		]);
	});

	it("skips each bad entry with one warning naming the server and the problem, keeping the good ones", () => {
		const config = loadMcpConfig({
			settingsServers: {
				good: { command: "fine" },
				"bad name": { command: "x" },
				nothing: {},
				both: { command: "x", url: "https://example.com" },
				badArgs: { command: "x", args: "--flag" },
				badEnv: { command: "x", env: { PORT: 8080 } },
				ftp: { url: "ftp://example.com" },
				scalar: "just a string",
			},
		});
		expect(config.servers.map((server) => server.name)).toEqual(["good"]);
		expect(config.warnings).toHaveLength(7);
		const warningFor = (name: string) => config.warnings.find((warning) => warning.includes(`"${name}"`));
		expect(warningFor("bad name")).toContain("letters, digits");
		expect(warningFor("nothing")).toContain("needs a command");
		expect(warningFor("both")).toContain("not both");
		expect(warningFor("badArgs")).toMatch(/args: .*expected array/);
		expect(warningFor("badEnv")).toMatch(/env\.PORT: .*expected string/);
		expect(warningFor("ftp")).toContain("not an http(s) url");
		expect(warningFor("scalar")).toContain("expected an object");
		for (const warning of config.warnings) expect(warning).toContain("in settings (mcp.servers) skipped");
	});

	it("warns once about a .mcp.json that is not JSON and still uses the settings' servers", () => {
		const root = projectWith("{ mcpServers: oops");
		const config = loadMcpConfig({ projectDirectory: root, settingsServers: { kept: { command: "x" } } });
		expect(config.servers.map((server) => server.name)).toEqual(["kept"]);
		expect(config.warnings).toHaveLength(1);
		expect(config.warnings[0]).toContain(join(root, ".mcp.json"));
		expect(config.warnings[0]).toContain("not valid JSON");
	});

	it("is quiet about a project without .mcp.json, or a .mcp.json without servers", () => {
		expect(loadMcpConfig({ projectDirectory: projectWith() })).toEqual({ servers: [], warnings: [] });
		expect(loadMcpConfig({ projectDirectory: projectWith("{}") })).toEqual({ servers: [], warnings: [] });
	});

	it("warns when mcp.servers is not an object", () => {
		const config = loadMcpConfig({ settingsServers: ["x"] });
		expect(config.servers).toEqual([]);
		expect(config.warnings).toEqual([
			"MCP servers in settings (mcp.servers) skipped: expected an object mapping server names to entries",
		]);
	});

	it("expands ${NAME} and ${NAME:-default}; an unset variable without a default skips the server", () => {
		const environment = { API_TOKEN: "secret", HOST: "127.0.0.1" };
		const config = loadMcpConfig({
			environment,
			settingsServers: {
				stdio: { command: "server", args: ["--port", "${PORT:-7000}"], env: { TOKEN: "${API_TOKEN}" } },
				web: { url: "http://${HOST}:8000/mcp", headers: { Authorization: "Bearer ${API_TOKEN}" } },
				missing: { command: "server", env: { TOKEN: "${NOT_SET_ANYWHERE}" } },
			},
		});
		expect(config.servers.find((server) => server.name === "stdio")?.transport).toEqual({
			kind: "stdio",
			command: "server",
			args: ["--port", "7000"],
			env: { TOKEN: "secret" },
		});
		expect(config.servers.find((server) => server.name === "web")?.transport).toEqual({
			kind: "http",
			url: "http://127.0.0.1:8000/mcp",
			headers: { Authorization: "Bearer secret" },
		});
		expect(config.warnings).toEqual([
			'MCP server "missing" in settings (mcp.servers) skipped: environment variable NOT_SET_ANYWHERE is not set',
		]);
	});
});

describe("expandVariables", () => {
	it("leaves text without variables alone and uses the default for an empty variable", () => {
		expect(expandVariables("plain $HOME text", {})).toBe("plain $HOME text");
		expect(expandVariables("${EMPTY:-fallback}", { EMPTY: "" })).toBe("fallback");
		expect(expandVariables("${EMPTY}", { EMPTY: "" })).toBe("");
	});
});
