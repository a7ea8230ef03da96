import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import { type FakeProvider, startFakeProvider } from "../support/fake-provider.js";

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
interface WireMessage {
	role: string;
	content: unknown;
}
const lastToolResult = (fake: FakeProvider, index: number) =>
	String(
		((fake.requests[index]?.body.messages ?? []) as WireMessage[]).filter((message) => message.role === "tool").at(-1)
			?.content,
	);

describe.skipIf(!cliBuilt)("the repeat guard, end to end", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	it("stubs repeated reads of an unchanged file, refuses the third repeat, and can be turned off", async () => {
		const work = tempDir();
		writeFileSync(join(work, "a.txt"), "one\ntwo\nthree\n");
		const script = () => [
			...Array.from({ length: 4 }, () => ({ toolCalls: [call("read_file", { path: "a.txt" })] })),
			{ text: "done" },
		];
		fake = await startFakeProvider({ script: script() });
		expect((await runCli(["run", "read it"], { env: cliEnv(tempDir(), fake), cwd: work })).code).toBe(0);
		expect(lastToolResult(fake, 1)).toContain("three");
		expect(lastToolResult(fake, 2)).toMatch(
			/^unchanged since your earlier read_file of a\.txt \(3 lines, sha256 [0-9a-f]{8}\); the content in that result is still current/,
		);
		expect(lastToolResult(fake, 3)).toMatch(/^unchanged since your earlier read_file/);
		expect(lastToolResult(fake, 4)).toMatch(/^repeat_blocked: /);
		await fake.close();

		const home = tempDir();
		writeFileSync(join(home, "settings.json"), JSON.stringify({ tools: { repeatGuard: false } }));
		fake = await startFakeProvider({ script: script() });
		expect((await runCli(["run", "read it"], { env: cliEnv(home, fake), cwd: work })).code).toBe(0);
		for (let index = 1; index <= 4; index++)
			expect(lastToolResult(fake, index)).toBe("     1\tone\n     2\ttwo\n     3\tthree");
	});

	it("a continued session still stubs a re-read of an unchanged file, and reads it again once it changed", async () => {
		const work = tempDir();
		const home = tempDir();
		writeFileSync(join(work, "a.txt"), "one\ntwo\nthree\n");
		const read = { toolCalls: [call("read_file", { path: "a.txt" })] };
		fake = await startFakeProvider({
			script: [read, { text: "read" }, read, { text: "again" }, read, { text: "new" }],
		});
		const first = await runCli(["run", "--json", "read it"], { env: cliEnv(home, fake), cwd: work });
		expect(first.code).toBe(0);
		expect(lastToolResult(fake, 1)).toContain("three");
		const id = (JSON.parse(first.stdout.split("\n")[0] as string) as { sessionId: string }).sessionId;
		// a new process: the guard's memory comes from the store
		expect((await runCli(["run", "--session", id, "read it again"], { env: cliEnv(home, fake), cwd: work })).code).toBe(
			0,
		);
		expect(lastToolResult(fake, 3)).toMatch(/^unchanged since your earlier read_file of a\.txt \(3 lines/);
		writeFileSync(join(work, "a.txt"), "one\ntwo\nfour\n");
		expect((await runCli(["run", "--session", id, "and now?"], { env: cliEnv(home, fake), cwd: work })).code).toBe(0);
		expect(lastToolResult(fake, 5)).toContain("four");
	});

	it("refuses the fourth identical call in a row and reports loop.suspected in --json output", async () => {
		const work = tempDir();
		fake = await startFakeProvider({
			script: [
				...Array.from({ length: 4 }, () => ({ toolCalls: [call("shell", { command: "echo same" })] })),
				...Array.from({ length: 5 }, (_, index) => [
					{ toolCalls: [call("list_dir", {})] },
					{ toolCalls: [call("glob", { pattern: `*.x${index}` })] },
				]).flat(),
				{ text: "giving up" },
			],
		});
		const result = await runCli(["run", "--mode", "auto", "--json", "loop"], {
			env: cliEnv(tempDir(), fake),
			cwd: work,
		});
		expect(result.code).toBe(0);
		expect(lastToolResult(fake, 3)).toContain("this is the 3rd identical shell call in a row");
		expect(lastToolResult(fake, 4)).toMatch(/^repeat_blocked: STOP calling shell with the same arguments/);
		const events = result.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as { type: string; tool?: string; count?: number });
		const suspected = events.filter((event) => event.type === "loop.suspected");
		expect(suspected).toEqual([{ type: "loop.suspected", tool: "list_dir", count: 5 }]);
	});
});
