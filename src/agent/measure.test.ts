import { describe, expect, it } from "vitest";
import type { Message } from "../llm/types.js";
import { measureMessages } from "./measure.js";

describe("request measurement", () => {
	it("counts what an image costs the provider, not the size of its reference", () => {
		const ref = {
			name: "shot.png",
			mime: "image/png" as const,
			bytes: 210_000,
			sha256: "ab",
			path: "/x/ab.png",
			width: 1568,
			height: 1176,
		};
		const withImage: Message = {
			role: "user",
			content: [
				{ type: "text", text: "Images from view_image (call v1):" },
				{ type: "image-ref", ref, marker: "[image: shot.png 1568×1176 image/png (205 KB)]" },
			],
		};
		const textOnly: Message = { role: "user", content: [{ type: "text", text: "Images from view_image (call v1):" }] };
		const difference = measureMessages([withImage]).tokens - measureMessages([textOnly]).tokens;
		expect(difference).toBeGreaterThanOrEqual(Math.ceil((1568 * 1176) / 750));
	});

	it("counts tool-result bytes as their text's UTF-8 bytes", () => {
		const result: Message = {
			role: "tool",
			toolCallId: "c",
			toolName: "shell",
			content: "é".repeat(10),
			isError: false,
		};
		expect(measureMessages([result]).toolResults.bytes).toBe(20);
	});
});
