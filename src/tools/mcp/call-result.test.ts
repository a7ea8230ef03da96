import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { convertCallResult } from "./call-result.js";

const root = mkdtempSync(join(tmpdir(), "snowpea-mcp-result-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const options = {
	toolName: "mcp__docs__fetch",
	spillDir: join(root, "spill"),
	attachmentDirectory: join(root, "attachments"),
	vision: true,
};

describe("convertCallResult", () => {
	it("joins text blocks and inlines text resources; binary content becomes a one-line note", async () => {
		const result = await convertCallResult(
			{
				content: [
					{ type: "text", text: "first" },
					{ type: "resource", resource: { uri: "file:///notes.md", text: "# Notes" } },
					{ type: "resource", resource: { uri: "file:///data.bin", blob: "AAAA", mimeType: "application/zip" } },
					{ type: "audio", data: "AAAA", mimeType: "audio/wav" },
					{ type: "resource_link", uri: "file:///big.log", name: "big.log" },
				],
			},
			options,
		);
		expect(result.ok).toBe(true);
		expect(result.content).toBe(
			[
				"first",
				"[resource file:///notes.md]",
				"# Notes",
				"[resource file:///data.bin (application/zip, 1 KB) omitted]",
				"[audio audio/wav (1 KB) omitted: snowpea cannot pass audio on]",
				"[resource link: big.log file:///big.log]",
			].join("\n"),
		);
	});

	it("shows structured content when there is no text", async () => {
		const result = await convertCallResult({ content: [], structuredContent: { count: 2 } }, options);
		expect(result.content).toBe('{\n  "count": 2\n}');
	});

	it("says so when a tool returns nothing, and when an error has no message", async () => {
		expect(await convertCallResult({ content: [] }, options)).toMatchObject({
			ok: true,
			content: "(the tool returned no content)",
		});
		expect(await convertCallResult({ content: [], isError: true }, options)).toMatchObject({
			ok: false,
			errorCode: "tool_error",
			content: "the MCP server reported an error without a message",
		});
	});

	it("keeps the result usable when an image block holds no image", async () => {
		const result = await convertCallResult(
			{ content: [{ type: "image", data: Buffer.from("not a picture").toString("base64"), mimeType: "image/png" }] },
			options,
		);
		expect(result.ok).toBe(true);
		expect(result.images).toBeUndefined();
		expect(result.content).toMatch(/^image not attached: .*not an image/);
	});
});
