import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageRef } from "../../llm/types.js";
import { imageSummary, storeImage } from "../attachments.js";
import { capOutput } from "../cap-output.js";
import type { ToolResult } from "../tool.js";

/** Budget of one MCP result's text, in UTF-8 bytes (image lines come on top). */
export const MCP_RESULT_CAP_BYTES = 8_192;

export interface ConvertOptions {
	/** The registered tool name (`mcp__<server>__<tool>`), used in image names. */
	toolName: string;
	/** Where capped output is spilled in full. */
	spillDir: string;
	/** The attachment store images go to. */
	attachmentDirectory: string;
	/** Whether the session's model can see images: when false, images are stored but not attached. */
	vision: boolean;
}

type ContentBlock = CallToolResult["content"][number];

/**
 * Turns an MCP `tools/call` answer into a ToolResult: text blocks joined by line breaks, embedded text resources
 * inline, other blocks as one-line notes; the text capped at MCP_RESULT_CAP_BYTES (30 % head, 70 % tail, the full text
 * spilled to a file the marker names). Image blocks (and image blobs) go through the attachment store: `images` holds
 * them and the text gets one line "image attached: <name> <W>×<H> <mime> (<N> KB)" each, never base64.
 * An `isError` answer becomes ok false with errorCode "tool_error". Never throws.
 */
export async function convertCallResult(result: unknown, options: ConvertOptions): Promise<ToolResult> {
	const record = (result ?? {}) as Record<string, unknown>;
	const blocks = Array.isArray(record.content) ? (record.content as ContentBlock[]) : [];
	const texts: string[] = [];
	const imageLines: string[] = [];
	const images: ImageRef[] = [];
	let imageCount = 0;

	const addImage = async (data: string, mimeType: string | undefined) => {
		imageCount++;
		const index = imageCount;
		const extension = mimeType?.split("/")[1]?.replace(/[^a-z0-9]/gi, "") || "img";
		const stored = await storeImage(
			{ bytes: Buffer.from(data, "base64"), name: `${options.toolName}-${index}.${extension}` },
			{ directory: options.attachmentDirectory },
		);
		if ("error" in stored) imageLines.push(`image not attached: ${stored.error}`);
		else if (options.vision) {
			images.push(stored);
			imageLines.push(`image attached: ${imageSummary(stored)}`);
		} else {
			imageLines.push(`image saved to ${stored.path} (${imageSummary(stored)}); this model cannot see images`);
		}
	};

	for (const block of blocks) {
		switch (block.type) {
			case "text":
				texts.push(block.text);
				break;
			case "image":
				await addImage(block.data, block.mimeType);
				break;
			case "audio":
				texts.push(`[audio ${block.mimeType} (${kilobytes(block.data)} KB) omitted: snowpea cannot pass audio on]`);
				break;
			case "resource": {
				const resource = block.resource;
				if ("text" in resource) texts.push(`[resource ${resource.uri}]\n${resource.text}`);
				else if (resource.mimeType?.startsWith("image/")) await addImage(resource.blob, resource.mimeType);
				else {
					texts.push(
						`[resource ${resource.uri} (${resource.mimeType ?? "binary"}, ${kilobytes(resource.blob)} KB) omitted]`,
					);
				}
				break;
			}
			case "resource_link":
				texts.push(`[resource link: ${block.name} ${block.uri}${block.description ? ` — ${block.description}` : ""}]`);
				break;
			default:
				texts.push(`[${String((block as { type?: unknown }).type)} content omitted]`);
		}
	}
	if (texts.length === 0 && record.structuredContent !== undefined) {
		texts.push(JSON.stringify(record.structuredContent, null, 2));
	}
	if (blocks.length === 0 && record.toolResult !== undefined) texts.push(JSON.stringify(record.toolResult, null, 2));

	const isError = record.isError === true;
	const joined = texts.join("\n");
	const capped = await capOutput(joined, options.spillDir, { maxBytes: MCP_RESULT_CAP_BYTES });
	const lines = [capped.text, ...imageLines].filter((line) => line !== "");
	const fallback = isError ? "the MCP server reported an error without a message" : "(the tool returned no content)";
	const content = lines.length > 0 ? lines.join("\n") : fallback;
	return {
		ok: !isError,
		content,
		...(isError ? { errorCode: "tool_error" } : {}),
		...(images.length > 0 ? { images } : {}),
		details: {
			bytes: capped.bytes,
			truncated: capped.truncated,
			...(capped.spillPath ? { spillPath: capped.spillPath } : {}),
		},
	};
}

/** Decoded size of base64 text in whole KB, at least 1. */
function kilobytes(base64: string): number {
	return Math.max(1, Math.round((base64.length * 3) / 4 / 1024));
}
