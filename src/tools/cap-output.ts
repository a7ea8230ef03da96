import { headTail, utf8Bytes } from "../llm/text.js";
import { writeSpill } from "./spill.js";

/** Output budget of tools whose output can be long (shell, execute_code, grep), in UTF-8 bytes. */
export const OUTPUT_CAP_BYTES = 30_000;

export interface CappedOutput {
	/** The text as the model reads it: unchanged, or head and tail lines around a marker naming the spill file. */
	text: string;
	truncated: boolean;
	/** Where the full text was saved; absent when nothing was cut or saving failed. */
	spillPath?: string;
	/** UTF-8 bytes of the full text. */
	bytes: number;
}

export interface CapOptions {
	/** Budget in UTF-8 bytes (default OUTPUT_CAP_BYTES). */
	maxBytes?: number;
	/** What to save when cutting, if not `text` itself (e.g. `text` plus a status line the caller appends). */
	spillText?: string;
}

/**
 * Caps `text` at `maxBytes`: when longer, the full text is saved with writeSpill in `spillDir` and the model gets whole
 * lines from the head and the tail (30 % / 70 %) around the marker line
 * `[… N lines (B bytes) omitted — full output in <path>; read_file it to see everything]`.
 * Never throws: a spill that fails is named in the marker instead.
 */
export async function capOutput(text: string, spillDir: string, options: CapOptions = {}): Promise<CappedOutput> {
	const maxBytes = options.maxBytes ?? OUTPUT_CAP_BYTES;
	const bytes = utf8Bytes(text);
	if (bytes <= maxBytes) return { text, truncated: false, bytes };
	let spillPath: string | undefined;
	let where: string;
	try {
		spillPath = await writeSpill(spillDir, options.spillText ?? text);
		where = `full output in ${spillPath}; read_file it to see everything`;
	} catch (error) {
		where = `the full output could not be saved (${error instanceof Error ? error.message : String(error)})`;
	}
	const capped = headTail(text, {
		maxBytes,
		headShare: 0.3,
		marker: (lines, omittedBytes) => `[… ${lines} lines (${omittedBytes} bytes) omitted — ${where}]`,
	});
	return { text: capped.text, truncated: capped.truncated, spillPath, bytes };
}
