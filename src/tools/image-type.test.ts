import { describe, expect, it } from "vitest";
import { sniffImageType } from "./image-type.js";

const bytes = (...parts: (number[] | string)[]) =>
	Uint8Array.from(parts.flatMap((part) => (typeof part === "string" ? Array.from(Buffer.from(part, "latin1")) : part)));

describe("sniffImageType", () => {
	it("recognises PNG, JPEG, both GIF versions and WebP by their magic bytes", () => {
		expect(sniffImageType(bytes([0x89], "PNG\r\n\u001a\n", [0, 0]))).toBe("image/png");
		expect(sniffImageType(bytes([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
		expect(sniffImageType(bytes("GIF87a", [1]))).toBe("image/gif");
		expect(sniffImageType(bytes("GIF89a", [1]))).toBe("image/gif");
		expect(sniffImageType(bytes("RIFF", [0x24, 0, 0, 0], "WEBPVP8 "))).toBe("image/webp");
	});

	it("rejects everything else, including near misses and short input", () => {
		expect(sniffImageType(bytes("RIFF", [0x24, 0, 0, 0], "WAVEfmt "))).toBeUndefined();
		expect(sniffImageType(bytes("GIF88a"))).toBeUndefined();
		expect(sniffImageType(bytes([0x89], "PNG"))).toBeUndefined();
		expect(sniffImageType(bytes("hello world"))).toBeUndefined();
		expect(sniffImageType(new Uint8Array())).toBeUndefined();
	});
});
