// A real MCP server over stdio for the MCP tests. Plain JavaScript: the tests spawn it with `node`.
// Tools: echo (text; readOnlyHint; `hang` waits until the call is cancelled), picture (a 4×3 PNG image block),
// big (50 KB of numbered lines), fail (an isError result) and crash (the process exits with code 3).
// With MCP_TEST_PID_FILE set, the server writes its process id there when it starts; with MCP_TEST_START_LOG set, it
// appends one line there per start.
import { appendFileSync, writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const PNG_4X3 =
	"iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEElEQVQImWM4IScHRww4OQD1xwwx6wqgCwAAAABJRU5ErkJggg==";

if (process.env.MCP_TEST_PID_FILE) writeFileSync(process.env.MCP_TEST_PID_FILE, String(process.pid));
if (process.env.MCP_TEST_START_LOG) appendFileSync(process.env.MCP_TEST_START_LOG, `${process.pid}\n`);

const server = new McpServer({ name: "snowpea-test-server", version: "1.0.0" });

server.registerTool(
	"echo",
	{
		description: "Echoes the text back.",
		inputSchema: { text: z.string(), hang: z.boolean().optional() },
		annotations: { readOnlyHint: true },
	},
	async ({ text, hang }, extra) => {
		if (hang) {
			await new Promise((resolve) => extra.signal.addEventListener("abort", resolve, { once: true }));
		}
		return { content: [{ type: "text", text: `echo: ${text}` }] };
	},
);

server.registerTool("picture", { description: "Returns a small picture." }, async () => ({
	content: [
		{ type: "text", text: "here is the picture" },
		{ type: "image", data: PNG_4X3, mimeType: "image/png" },
	],
}));

server.registerTool("big", { description: "Returns 50 KB of numbered lines." }, async () => {
	const lines = [];
	for (let number = 1; number <= 2500; number++) lines.push(`line ${String(number).padStart(5, "0")} ..........`);
	return { content: [{ type: "text", text: lines.join("\n") }] };
});

server.registerTool("fail", { description: "Always fails." }, async () => ({
	content: [{ type: "text", text: "something broke on purpose" }],
	isError: true,
}));

server.registerTool("crash", { description: "Exits the server process with code 3." }, async () => {
	process.stderr.write("crashing now\n");
	process.exit(3);
});

await server.connect(new StdioServerTransport());
