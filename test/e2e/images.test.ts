import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import { type FakeProvider, startFakeProvider } from "../support/fake-provider.js";

interface Block {
	type: string;
	text?: string;
	tool_use_id?: string;
	content?: unknown;
	image_url?: { url: string };
	source?: { type: string; media_type: string; data: string };
}
interface WireMessage {
	role: string;
	content: string | Block[];
}

const SUMMARY = /^image attached: shot\.png 1568×1176 image\/png \(\d+ KB\)$/;

describe.skipIf(!cliBuilt)(
	"view_image end to end: the picture reaches the model, the transcript keeps a reference",
	() => {
		let fake: FakeProvider;
		let home: string;
		let work: string;
		let temporary: string;
		let original: Buffer;

		beforeEach(async () => {
			home = tempDir("snowpea-home-");
			work = tempDir("snowpea-work-");
			temporary = tempDir("snowpea-tmp-");
			original = await sharp({ create: { width: 2000, height: 1500, channels: 3, background: "#3366cc" } })
				.png()
				.toBuffer();
			writeFileSync(join(work, "shot.png"), original);
		});
		afterEach(async () => {
			await fake?.close();
		});

		async function look(model: string): Promise<{ sessionId: string; stdout: string }> {
			fake = await startFakeProvider({
				script: [
					{ toolCalls: [{ id: "v1", name: "view_image", arguments: JSON.stringify({ path: "shot.png" }) }] },
					{ text: "A blue rectangle." },
				],
			});
			// the default attachment store lives under the OS temp directory: give this run its own
			const result = await runCli(["run", "--json", "--model", model, "what is in shot.png?"], {
				env: cliEnv(home, fake, { TMPDIR: temporary }),
				cwd: work,
			});
			expect(result.code, result.stderr).toBe(0);
			expect(fake.requests).toHaveLength(2);
			const first = JSON.parse(result.stdout.split("\n")[0] as string) as { sessionId: string };
			return { sessionId: first.sessionId, stdout: result.stdout };
		}

		async function expectDownscaledPng(base64: string): Promise<void> {
			const bytes = Buffer.from(base64, "base64");
			const metadata = await sharp(bytes).metadata();
			expect([metadata.format, metadata.width, metadata.height]).toEqual(["png", 1568, 1176]);
		}

		/** The transcript as stored (export and database) holds the marker, never the image's base64. */
		async function expectNoBase64(sessionId: string, base64: string): Promise<void> {
			const exported = await runCli(["sessions", "export", sessionId], { env: cliEnv(home), cwd: work });
			expect(exported.code).toBe(0);
			expect(exported.stdout).toMatch(/\[image: shot\.png 1568×1176 image\/png \(\d+ KB\)\]/);
			const probe = base64.slice(100, 164);
			expect(exported.stdout).not.toContain(probe);
			for (const file of readdirSync(home)) {
				if (file.startsWith("state.db")) expect(readFileSync(join(home, file)).includes(probe)).toBe(false);
			}
			// the user's file is untouched; the stored copy sits in the attachment store
			expect(Buffer.compare(readFileSync(join(work, "shot.png")), original)).toBe(0);
			const store = join(home, "sessions", sessionId, "attachments");
			expect(existsSync(store)).toBe(true);
			expect(readdirSync(store).filter((name) => name.endsWith(".png"))).toHaveLength(1);
		}

		it("openai: a one-line tool result, then a user message with an image_url data: URL", async () => {
			const { sessionId } = await look("openai:gpt-4o");
			const messages = fake.requests[1]?.body.messages as WireMessage[];
			expect(messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
			expect(messages[3]?.content).toMatch(SUMMARY);
			const attached = messages[4]?.content as Block[];
			expect(attached[0]).toEqual({ type: "text", text: "Images from view_image (call v1):" });
			expect(attached[1]?.type).toBe("image_url");
			const url = attached[1]?.image_url?.url ?? "";
			expect(url.startsWith("data:image/png;base64,")).toBe(true);
			const base64 = url.slice("data:image/png;base64,".length);
			await expectDownscaledPng(base64);
			await expectNoBase64(sessionId, base64);
		});

		it("anthropic: the image block travels in the same user turn as the tool_result", async () => {
			const { sessionId } = await look("anthropic:claude-sonnet-4-5");
			const messages = fake.requests[1]?.body.messages as WireMessage[];
			expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
			const turn = messages[2]?.content as Block[];
			expect(turn.map((block) => block.type)).toEqual(["tool_result", "text", "image"]);
			expect(turn[0]?.tool_use_id).toBe("v1");
			const result = turn[0]?.content;
			const resultText = typeof result === "string" ? result : (result as Block[] | undefined)?.[0]?.text;
			expect(resultText).toMatch(SUMMARY);
			expect(turn[1]?.text).toBe("Images from view_image (call v1):");
			expect(turn[2]?.source?.type).toBe("base64");
			expect(turn[2]?.source?.media_type).toBe("image/png");
			const base64 = turn[2]?.source?.data ?? "";
			await expectDownscaledPng(base64);
			await expectNoBase64(sessionId, base64);
		});
	},
);
