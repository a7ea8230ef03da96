import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Entry } from "../context/ledger.js";
import { DEFAULT_CONTEXT_SETTINGS } from "../context/settings.js";
import type { Message, SystemSegment, ToolDefinition } from "../llm/types.js";
import { ContextPipeline } from "./context-pipeline.js";

/** A session of `rounds` rounds, each with one 6,000-byte shell result. */
function transcript(rounds: number): Entry[] {
	const entries: Entry[] = [{ message: { role: "user", content: [{ type: "text", text: "go" }] }, round: 1 }];
	for (let round = 1; round <= rounds; round++) {
		const id = `call${round}`;
		entries.push({
			message: { role: "assistant", text: "", toolCalls: [{ id, name: "shell", arguments: "{}" }] },
			round,
		});
		entries.push({
			message: {
				role: "tool",
				toolCallId: id,
				toolName: "shell",
				content: `${String(round % 10).repeat(99)}\n`.repeat(60),
				isError: false,
			},
			round,
		});
	}
	return entries;
}

const frame = { fixedTokens: 100, tools: { shell: { readOnly: false } } };
const budget = (spillDir: string) => ({
	...DEFAULT_CONTEXT_SETTINGS,
	policy: "budget" as const,
	historyBudgetBytes: 10_000,
	historyBudgetLowBytes: 4_000,
	keepRecentResults: 1,
	spillDir,
});

describe("the agent's side of the context engine", () => {
	it("S1: writes each elided result to a 0600 file in a 0700 directory named by ledger position, before replacing it", () => {
		const spillDir = join(mkdtempSync(join(tmpdir(), "snowpea-pipeline-")), "session-a", "elided");
		const pipeline = new ContextPipeline(budget(spillDir));
		const entries = transcript(2);
		const { messages, events, forgotten } = pipeline.build(entries, 3, frame);
		expect(forgotten).toEqual(["call1"]);
		expect(pipeline.isVisible("call1")).toBe(false);
		expect(pipeline.isVisible("call2")).toBe(true);
		const file = join(spillDir, "0000.txt");
		const original = entries[2] as Entry;
		expect(readFileSync(file, "utf8")).toBe(original.message.role === "tool" ? original.message.content : "");
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(statSync(spillDir).mode & 0o777).toBe(0o700);
		expect(messages.find((message) => message.role === "tool")).toMatchObject({
			content: `[earlier shell result elided — 6000 bytes saved to ${file}; read_file to recover.]`,
		});
		expect(events.map((event) => event.type)).toEqual(["decision", "elision"]);
	});

	it("S3: a spill that cannot be written still elides, with a bare placeholder and exactly one warning", () => {
		const blocker = join(mkdtempSync(join(tmpdir(), "snowpea-pipeline-")), "not-a-directory");
		writeFileSync(blocker, "a file where the spill directory should be");
		const pipeline = new ContextPipeline(budget(join(blocker, "elided")));
		const entries = transcript(6);
		const warnings: string[] = [];
		for (let round = 3; round <= 7; round++) {
			const part = entries.slice(0, 1 + 2 * (round - 1));
			for (const event of pipeline.build(part, round, frame).events)
				if (event.type === "warning") warnings.push(event.message);
		}
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toContain("not recoverable");
		const replaced = pipeline.decisions.filter((decision) => decision.kind === "replace");
		expect(replaced.length).toBeGreaterThan(1);
		for (const decision of replaced) {
			expect(decision.spill).toBeUndefined();
			expect(decision.placeholder).toMatch(
				/^\[earlier shell result elided to reclaim context — 6000 bytes\. Re-run the tool/,
			);
		}
	});

	it("rebuilds visibility from a stored ledger and projects the same bytes after a restart", () => {
		const spillDir = join(mkdtempSync(join(tmpdir(), "snowpea-pipeline-")), "elided");
		const entries = transcript(3);
		const first = new ContextPipeline(budget(spillDir));
		const before = first.build(entries, 4, frame).messages;
		const resumed = new ContextPipeline(budget(spillDir), first.decisions);
		resumed.restore(entries);
		expect(resumed.isVisible("call1")).toBe(false);
		const after = resumed.build(entries, 4, frame);
		expect(after.events).toEqual([]);
		expect(JSON.stringify(after.messages)).toBe(JSON.stringify(before));
	});

	it("spills the long arguments of a pruned call, and without a writable spill directory elides them bare", () => {
		const content = "x".repeat(99).concat("\n").repeat(20);
		const entries: Entry[] = [{ message: { role: "user", content: [{ type: "text", text: "go" }] }, round: 1 }];
		for (let round = 1; round <= 3; round++) {
			const id = `write${round}`;
			const call = { id, name: "write_file", arguments: JSON.stringify({ path: `f${round}`, content }) };
			entries.push({ message: { role: "assistant", text: "", toolCalls: [call] }, round });
			const answer = { role: "tool" as const, toolCallId: id, toolName: "write_file", content: "ok", isError: false };
			entries.push({ message: answer, round });
		}
		const rounds = (spillDir: string) => ({
			...DEFAULT_CONTEXT_SETTINGS,
			policy: "rounds" as const,
			keepToolRounds: 1,
			spillDir,
		});
		const written = (messages: readonly Message[]) =>
			messages.flatMap((message) =>
				message.role === "assistant"
					? message.toolCalls.map((call) => (JSON.parse(call.arguments) as { content: string }).content)
					: [],
			);

		const spillDir = join(mkdtempSync(join(tmpdir(), "snowpea-pipeline-")), "elided");
		const { messages, events } = new ContextPipeline(rounds(spillDir)).build(entries, 4, frame);
		const file = join(spillDir, "0000.txt");
		expect(written(messages)).toEqual([
			`[snowpea elided this 21-line value (2000 chars) of an earlier call; the call ran with the full text; saved to ${file}]`,
			`[snowpea elided this 21-line value (2000 chars) of an earlier call; the call ran with the full text; saved to ${join(spillDir, "0001.txt")}]`,
			content,
		]);
		expect(readFileSync(file, "utf8")).toBe(`--- write_file (write1) content ---\n${content}\n`);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(events.filter((event) => event.type === "decision").map((event) => event.kind)).toEqual([
			"arguments",
			"arguments",
		]);
		expect(events.find((event) => event.type === "elision")).toMatchObject({ count: 0, argumentMessages: 2 });

		const blocker = join(mkdtempSync(join(tmpdir(), "snowpea-pipeline-")), "not-a-directory");
		writeFileSync(blocker, "a file where the spill directory should be");
		const blocked = new ContextPipeline(rounds(join(blocker, "elided"))).build(entries, 4, frame);
		expect(written(blocked.messages).slice(0, 2)).toEqual([
			"[snowpea elided this 21-line value (2000 chars) of an earlier call; the call ran with the full text]",
			"[snowpea elided this 21-line value (2000 chars) of an earlier call; the call ran with the full text]",
		]);
		expect(blocked.events.filter((event) => event.type === "warning")).toHaveLength(1);
	});

	it("auto rewrites for free in a round whose tool list or system prompt changes anyway", () => {
		const entries = transcript(12).map((entry) =>
			entry.message.role === "tool"
				? { ...entry, message: { ...entry.message, content: entry.message.content.slice(0, 1000) } }
				: entry,
		);
		const system: SystemSegment[] = [{ text: "You are snowpea.", tier: "stable" }];
		const before: ToolDefinition[] = [];
		const frameWith = (system: SystemSegment[], definitions: ToolDefinition[]) => ({ ...frame, system, definitions });
		const at13 = (next: { system: SystemSegment[]; definitions: ToolDefinition[] }) => {
			const pipeline = new ContextPipeline({ ...DEFAULT_CONTEXT_SETTINGS, policy: "auto" });
			for (let round = 2; round <= 12; round++)
				pipeline.build(entries.slice(0, 1 + 2 * (round - 1)), round, frameWith(system, before));
			expect(pipeline.decisions).toEqual([]);
			return pipeline.build(entries, 13, frameWith(next.system, next.definitions));
		};
		// warm and unchanged: 7 stale 1 KB results are not worth a cache write
		expect(at13({ system, definitions: before }).events).toEqual([]);
		// a deferred tool was loaded: the messages are re-written anyway, so everything stale goes (rounds 1–7)
		const loaded = at13({ system, definitions: [{ name: "browser_open", description: "", parameters: {} }] });
		const elision = loaded.events.find((event) => event.type === "elision");
		expect(elision).toMatchObject({ count: 7, reason: { warmProbability: 0 } });
		// an edited instruction file changes the system prompt: the same
		const edited = at13({ system: [{ text: "You are snowpea. New rules.", tier: "stable" }], definitions: before });
		expect(edited.events.find((event) => event.type === "elision")).toMatchObject({ count: 7 });
	});
});
