import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import { type FakeProvider, startFakeProvider } from "../support/fake-provider.js";

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

describe.skipIf(!cliBuilt)("byte-stable requests keep the provider's prefix cache", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	for (const model of ["openai:gpt-4o", "anthropic:claude-sonnet-4-5"]) {
		it(`${model}: every request extends the previous one byte for byte over 6 rounds`, async () => {
			const work = tempDir();
			writeFileSync(join(work, "notes.txt"), "line one\nline two\n");
			fake = await startFakeProvider({
				script: [
					{ toolCalls: [call("list_dir", {})] },
					{ toolCalls: [call("read_file", { path: "notes.txt" })] },
					{ toolCalls: [call("grep", { pattern: "two" }), call("glob", { pattern: "*.txt" })] },
					{ toolCalls: [call("write_file", { path: "out.txt", content: "x" })] },
					{ toolCalls: [call("shell", { command: "cat out.txt" })] },
					{ text: "finished" },
				],
			});
			const result = await runCli(["run", "--mode", "auto", "--model", model, "look around"], {
				env: cliEnv(tempDir(), fake),
				cwd: work,
			});
			expect(result.code).toBe(0);
			expect(fake.requests).toHaveLength(6);
			for (let index = 1; index < fake.requests.length; index++) {
				const previous = fake.requests[index - 1]!;
				const current = fake.requests[index]!;
				expect(current.cachedTokens, `request ${index + 1} reads the whole previous request from cache`).toBe(
					previous.promptTokens,
				);
				expect(JSON.stringify(current.body.tools)).toBe(JSON.stringify(previous.body.tools));
				expect(JSON.stringify(current.body.system ?? null)).toBe(JSON.stringify(previous.body.system ?? null));
			}
		});
	}
});
