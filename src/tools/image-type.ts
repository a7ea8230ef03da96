import type { ImageMime } from "../llm/types.js";

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
	if (bytes.length < at + signature.length) return false;
	return signature.every((value, index) => bytes[at + index] === value);
}

const ascii = (text: string): number[] => Array.from(text, (character) => character.charCodeAt(0));

/**
 * The image type of `bytes` from their magic numbers alone (never from a file name): PNG, JPEG, GIF87a/GIF89a, and
 * WebP (RIFF….WEBP). Undefined for anything else. Only the first 12 bytes are looked at.
 */
export function sniffImageType(bytes: Uint8Array): ImageMime | undefined {
	if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
	if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
	if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif";
	if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
	return undefined;
}
