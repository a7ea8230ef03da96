import { clipBytes, utf8Bytes } from "../llm/text.js";

export interface CapOptions {
	/** Most UTF-8 bytes of the result that are kept; 0 (or less) turns the cap off. */
	maxBytes: number;
	/** Named in the notice so the model knows which output was cut. */
	toolName: string;
	/** Where the agent saved the full text, when it did. */
	fullTextPath?: string;
}

export interface CappedResult {
	/** The kept head followed by the notice, or the input unchanged. */
	content: string;
	/** UTF-8 bytes of the original that were kept (the notice is not counted). */
	keptBytes: number;
	/** UTF-8 bytes of the original that were left out. */
	droppedBytes: number;
}

/**
 * The per-result cap, applied once when a tool result enters the transcript, so it never disturbs a cached prefix.
 * Keeps the longest head of `content` that fits in `maxBytes` without splitting a character, then appends a notice
 * naming the tool, the kept, dropped and total bytes, and where the full text is (or how to get less output).
 * The notice comes on top of `maxBytes`. Pure; never throws.
 */
export function capToolResult(content: string, options: CapOptions): CappedResult {
	const totalBytes = utf8Bytes(content);
	if (options.maxBytes <= 0 || totalBytes <= options.maxBytes) {
		return { content, keptBytes: totalBytes, droppedBytes: 0 };
	}
	const head = clipBytes(content, options.maxBytes);
	const keptBytes = utf8Bytes(head);
	const droppedBytes = totalBytes - keptBytes;
	const name = options.toolName || "tool";
	const where = options.fullTextPath
		? `The full output is in ${options.fullTextPath}; read_file it to see the rest.`
		: "Narrow the request, or page through the output, to see the rest.";
	const notice = `[${name} output cut: kept the first ${keptBytes} of ${totalBytes} bytes, dropped ${droppedBytes}. ${where}]`;
	const separator = head.endsWith("\n") ? "" : "\n";
	return { content: `${head}${separator}${notice}`, keptBytes, droppedBytes };
}
