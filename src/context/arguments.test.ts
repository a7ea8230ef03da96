import { describe, expect, it } from "vitest";
import { entryOf, stateOf, text, transcript } from "../../test/support/context-fixtures.js";
import type { AssistantMessage } from "../llm/types.js";
import { argumentPlaceholder, argumentsSpillText, bareArguments, elideArguments } from "./arguments.js";
import type { ArgumentsDecision, Decision, Entry, ReplaceDecision } from "./ledger.js";
import { roundsPolicy } from "./policies.js";
import { project } from "./project.js";

const write = (content: string, path = "src/app.ts") => JSON.stringify({ path, content });
const assistant = (...calls: string[]): AssistantMessage => ({
	role: "assistant",
	text: "Writing the file now.",
	toolCalls: calls.map((argumentsText, index) => ({
		id: `call-${index}`,
		name: "write_file",
		arguments: argumentsText,
	})),
});

describe("elideArguments", () => {
	it("replaces every long string value, at any depth, and keeps keys, short values and the JSON shape", () => {
		const body = text(800);
		const message = assistant(
			write(body),
			JSON.stringify({ path: "b.ts", edits: [{ old_string: "x", new_string: text(600, "y") }] }),
			JSON.stringify({ command: "ls" }),
		);
		const elided = elideArguments(message, 500);
		expect(elided?.values.map((value) => [value.call.id, value.path])).toEqual([
			["call-0", "content"],
			["call-1", "edits[0].new_string"],
		]);
		const [first, second] = (elided?.arguments ?? []).map((shown) => JSON.parse(shown));
		expect(first).toEqual({ path: "src/app.ts", content: argumentPlaceholder(17, 800) });
		expect(first.content).toBe(
			"[snowpea elided this 17-line value (800 chars) of an earlier call; the call ran with the full text]",
		);
		expect(second.edits[0].old_string).toBe("x");
		expect(second.edits[0].new_string).toBe(argumentPlaceholder(13, 600));
		// a call with nothing long keeps its exact text
		expect(elided?.arguments[2]).toBe(message.toolCalls[2]?.arguments);
	});

	it("names the spill file in every note when given one, and the spill text holds each original value", () => {
		const body = text(800);
		const elided = elideArguments(assistant(write(body)), 500, "/spill/0003.txt");
		expect(JSON.parse(elided?.arguments[0] ?? "{}").content).toBe(
			"[snowpea elided this 17-line value (800 chars) of an earlier call; the call ran with the full text; saved to /spill/0003.txt]",
		);
		expect(argumentsSpillText(elided?.values ?? [])).toBe(`--- write_file (call-0) content ---\n${body}\n`);
	});

	it("leaves short values, non-JSON arguments and a zero threshold alone", () => {
		expect(elideArguments(assistant(write(text(499))), 500)).toBeUndefined();
		expect(elideArguments(assistant(`not json ${text(900)}`), 500)).toBeUndefined();
		expect(elideArguments(assistant(write(text(900))), 0)).toBeUndefined();
	});

	it("bareArguments drops the spill path from the notes, or the decision when nothing is left to elide", () => {
		const message = assistant(write(text(800)));
		const spilled: ArgumentsDecision = {
			kind: "arguments",
			round: 5,
			entry: 1,
			arguments: elideArguments(message, 500, "/spill/0000.txt")?.arguments ?? [],
			bytesBefore: 0,
			bytesAfter: 0,
			spill: { position: 0, path: "/spill/0000.txt" },
		};
		const bare = bareArguments(spilled, message, 500);
		expect(bare?.spill).toBeUndefined();
		expect(bare?.arguments).toEqual(elideArguments(message, 500)?.arguments);
		expect(bare?.bytesAfter).toBe(Buffer.byteLength(bare?.arguments[0] ?? ""));
		expect(bareArguments(spilled, assistant(write("short")), 500)).toBeUndefined();
	});
});

describe("arguments elided with their results (rounds and auto)", () => {
	const rounds = () =>
		transcript([
			[{ content: text(300), tool: "write_file", arguments: write(text(2000)) }],
			[{ content: text(300), arguments: write(text(700, "z")) }, text(200)],
			[text(100)],
			[text(100)],
		]);

	it("elides a call's long arguments once all its results are pruned, spilled after the results", () => {
		const entries = rounds();
		const decisions = roundsPolicy(
			stateOf(entries, { policy: "rounds", keepToolRounds: 2, spillDir: "/spill", spillAvailable: true }),
		);
		expect(decisions.map((decision) => [decision.kind, decision.entry])).toEqual([
			["arguments", 1],
			["replace", entryOf(entries, "c1-0")],
			["arguments", 3],
			["replace", entryOf(entries, "c2-0")],
			["replace", entryOf(entries, "c2-1")],
		]);
		const positions = decisions.map((decision) => decision.spill?.position);
		expect(positions).toEqual([3, 0, 4, 1, 2]);
		const ledger: Decision[] = [...decisions];
		const shown = project(entries, ledger, 5);
		const first = shown[1];
		expect(first?.role === "assistant" && first.toolCalls[0]?.id).toBe("c1-0");
		expect(first?.role === "assistant" && JSON.parse(first.toolCalls[0]?.arguments ?? "{}")).toEqual({
			path: "src/app.ts",
			content: argumentPlaceholder(41, 2000, "/spill/0003.txt"),
		});
		// idempotent, and the request never grows
		expect(roundsPolicy(stateOf(entries, { policy: "rounds", keepToolRounds: 2 }, { ledger }))).toEqual([]);
		expect(JSON.stringify(shown).length).toBeLessThan(JSON.stringify(project(entries, [], 5)).length);
	});

	it("waits while any result of the call is still shown, and never elides for a skill marker", () => {
		const entries = rounds();
		const replacedBy = (reason: ReplaceDecision["reason"]): ReplaceDecision => ({
			kind: "replace",
			round: 4,
			entry: entryOf(entries, "c2-1"),
			toolName: "read_file",
			reason,
			placeholder: "[x]",
			bytesBefore: 200,
			bytesAfter: 3,
		});
		// round 2 is kept verbatim but c2-1 was replaced earlier: c2-0 still shows, so round 2's arguments stay
		const waiting = roundsPolicy(
			stateOf(entries, { policy: "rounds", keepToolRounds: 3 }, { ledger: [replacedBy("prune")], round: 5 }),
		);
		expect(waiting.map((decision) => [decision.kind, decision.entry])).toEqual([
			["arguments", 1],
			["replace", entryOf(entries, "c1-0")],
		]);
		// with c2-1 pruned, pruning c2-0 completes round 2: its arguments go in the same pass
		const complete = roundsPolicy(
			stateOf(entries, { policy: "rounds", keepToolRounds: 2 }, { ledger: [replacedBy("prune")], round: 5 }),
		);
		expect(complete.map((decision) => [decision.kind, decision.entry])).toContainEqual(["arguments", 3]);
		// a skill reload marker follows its own lifecycle: it does not count as the call's result being gone
		const skill = roundsPolicy(
			stateOf(entries, { policy: "rounds", keepToolRounds: 2 }, { ledger: [replacedBy("skill")], round: 5 }),
		);
		expect(skill.map((decision) => [decision.kind, decision.entry])).toEqual([
			["arguments", 1],
			["replace", entryOf(entries, "c1-0")],
			["replace", entryOf(entries, "c2-0")],
		]);
	});

	it("elideArgumentChars 0 turns it off", () => {
		const decisions = roundsPolicy(stateOf(rounds(), { policy: "rounds", keepToolRounds: 2, elideArgumentChars: 0 }));
		expect(decisions.every((decision) => decision.kind === "replace")).toBe(true);
	});

	it("a projection ignores an arguments decision that does not match the message's calls", () => {
		const entries: Entry[] = rounds();
		const wrong: ArgumentsDecision = {
			kind: "arguments",
			round: 5,
			entry: 1,
			arguments: ["{}", "{}"],
			bytesBefore: 10,
			bytesAfter: 4,
		};
		expect(project(entries, [wrong], 5)[1]).toBe(entries[1]?.message);
	});
});
