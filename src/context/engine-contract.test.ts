// The contract every policy keeps, checked with random sessions: pure, monotone, never larger, idempotent, the
// in-flight round untouched, tool-call pairs intact, and the same bytes for the same state.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message, ToolResultMessage } from "../llm/types.js";
import { runPolicy } from "./engine.js";
import type { ArgumentsDecision, Decision, Entry } from "./ledger.js";
import type { PolicyState } from "./policies.js";
import { currentDecisions, liveToolResultBytes, project } from "./project.js";
import { type ContextPolicy, type ContextSettings, DEFAULT_CONTEXT_SETTINGS } from "./settings.js";

const TOOLS = ["read_file", "shell", "grep", "ask_user", "skill_view", "../../etc"];
const POLICIES: ContextPolicy[] = ["off", "rounds", "budget", "ratio", "mask", "clear", "auto"];
const tools: PolicyState["tools"] = {
	shell: { readOnly: false },
	read_file: { readOnly: true, snip: { headLines: 5, tailLines: 3 } },
};

const result = fc.record({
	size: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 60, max: 4000 })),
	width: fc.integer({ min: 1, max: 120 }),
	character: fc.constantFrom("a", "é", "漢", "😀"),
	tool: fc.constantFrom(...TOOLS),
	isError: fc.boolean(),
	/** Characters of a string argument of its call (the content of a write, say). */
	argument: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 40, max: 3000 })),
});
const round = fc.record({
	results: fc.array(result, { maxLength: 4 }),
	user: fc.boolean(),
	promptTokens: fc.integer({ min: 0, max: 6000 }),
});
const settings = fc.record({
	keepToolRounds: fc.integer({ min: 0, max: 3 }),
	historyBudgetBytes: fc.integer({ min: 0, max: 8000 }),
	historyBudgetLowBytes: fc.integer({ min: 0, max: 8000 }),
	keepRecentResults: fc.integer({ min: 0, max: 4 }),
	spill: fc.constantFrom("on", "off", "unreadable"),
	contextWindow: fc.integer({ min: 0, max: 5000 }),
	maskKeep: fc.integer({ min: 0, max: 4 }),
	clearTriggerTokens: fc.integer({ min: 0, max: 4000 }),
	clearKeep: fc.integer({ min: 0, max: 3 }),
	clearMinTokens: fc.integer({ min: 0, max: 400 }),
	elideArgumentChars: fc.constantFrom(0, 30, 500),
	autoSpend: fc.constantFrom("expected" as const, "saved" as const),
});

function settingsFor(
	policy: ContextPolicy,
	drawn: typeof settings extends fc.Arbitrary<infer T> ? T : never,
): ContextSettings {
	const { spill, ...rest } = drawn;
	return {
		...DEFAULT_CONTEXT_SETTINGS,
		...rest,
		policy,
		spillDir: spill === "off" ? "off" : "/spill/session",
		spillAvailable: spill === "on",
	};
}

/** `size` characters in lines of `width`, ending the last line early. */
function content(size: number, width: number, character: string): string {
	const line = `${character.repeat(Math.max(0, width - 1))}\n`;
	return Array.from({ length: Math.ceil(size / width) }, () => line)
		.join("")
		.slice(0, size * character.length);
}

/** Appends one round the way the agent loop does: maybe a prompt, the assistant message, its results. */
function appendRound(
	entries: Entry[],
	number: number,
	spec: typeof round extends fc.Arbitrary<infer T> ? T : never,
): void {
	if (spec.user)
		entries.push({ round: number, message: { role: "user", content: [{ type: "text", text: `prompt ${number}` }] } });
	const calls = spec.results.map((item, index) => ({
		id: `call-${number}-${index}`,
		name: item.tool,
		arguments: JSON.stringify({ path: `f${index}`, content: content(item.argument, item.width, item.character) }),
	}));
	entries.push({ round: number, message: { role: "assistant", text: "", toolCalls: calls } });
	for (const [index, item] of spec.results.entries()) {
		const message: ToolResultMessage = {
			role: "tool",
			toolCallId: `call-${number}-${index}`,
			toolName: item.tool,
			content: content(item.size, item.width, item.character),
			isError: item.isError,
		};
		entries.push({ round: number, message });
	}
}

const size = (messages: Message[]) => Buffer.byteLength(JSON.stringify(messages));

/** Every assistant message is followed by exactly one result per call, in call order, and no other result exists. */
function expectPairsIntact(messages: Message[]): void {
	for (const [index, message] of messages.entries()) {
		if (message.role === "assistant") {
			const answers = messages.slice(index + 1, index + 1 + message.toolCalls.length);
			expect(answers.map((answer) => answer.role === "tool" && answer.toolCallId)).toEqual(
				message.toolCalls.map((call) => call.id),
			);
		}
		if (message.role === "tool") {
			const owner = messages.slice(0, index).findLast((candidate) => candidate.role === "assistant");
			expect(owner?.role === "assistant" && owner.toolCalls.some((call) => call.id === message.toolCallId)).toBe(true);
		}
	}
}

/** Runs one random session, checking the contract at every round; `policyAt` picks the policy of each round. */
function checkSession(
	rounds: (typeof round extends fc.Arbitrary<infer T> ? T : never)[],
	drawn: typeof settings extends fc.Arbitrary<infer T> ? T : never,
	policyAt: (index: number) => ContextPolicy,
	strictlyMonotone: boolean,
): void {
	const entries: Entry[] = [];
	const ledger: Decision[] = [];
	let shown = new Map<number, string>();
	for (const [index, spec] of rounds.entries()) {
		appendRound(entries, index + 1, spec);
		const state: PolicyState = {
			entries,
			ledger,
			round: index + 2,
			settings: settingsFor(policyAt(index), drawn),
			promptTokens: spec.promptTokens,
			tools,
		};
		const before = project(entries, ledger, state.round);
		const outcome = runPolicy(state);
		const { decisions } = outcome;

		// Pure: the same state gives the same decisions and report.
		expect(runPolicy(state)).toEqual(outcome);
		expect(outcome.report === undefined).toBe(decisions.length === 0);
		// Idempotent: with its decisions appended, the policy has nothing left to do.
		expect(runPolicy({ ...state, ledger: [...ledger, ...decisions] }).decisions).toEqual([]);

		const newest = Math.max(...entries.filter((entry) => entry.message.role === "tool").map((entry) => entry.round));
		const arguments_: ArgumentsDecision[] = [];
		for (const decision of decisions) {
			const entry = entries[decision.entry] as Entry;
			expect(decision.round).toBe(state.round);
			if (decision.kind === "arguments") {
				arguments_.push(decision);
				continue;
			}
			expect(entry.message.role).toBe("tool");
			expect(entry.round).not.toBe(newest);
			// exempt tools are never replaced by a policy; skill_view bodies only by their own reload marker
			if (decision.reason === "skill") expect(decision.toolName).toBe("skill_view");
			else expect(state.settings.exemptTools).not.toContain(decision.toolName);
			expect(decision.bytesAfter).toBe(Buffer.byteLength(decision.placeholder));
		}

		ledger.push(...decisions);
		const after = project(entries, ledger, state.round);
		// Elided arguments: only for calls whose results are all replaced now; valid JSON of the same keys; smaller.
		const replacedNow = new Set(
			currentDecisions(entries, ledger, state.round).flatMap((decision, index) => (decision ? [index] : [])),
		);
		for (const decision of arguments_) {
			expect(["rounds", "auto"]).toContain(state.settings.policy);
			const message = (entries[decision.entry] as Entry).message;
			if (message.role !== "assistant") throw new Error("an arguments decision on a message that is not the model's");
			const ids = new Set(message.toolCalls.map((call) => call.id));
			const answers = entries.flatMap(({ message: answer }, index) =>
				answer.role === "tool" && ids.has(answer.toolCallId) ? [index] : [],
			);
			expect(answers.length).toBe(message.toolCalls.length);
			// each result is replaced, or stale but smaller than any placeholder: never in flight, never exempt
			for (const index of answers) {
				const answer = (entries[index] as Entry).message as ToolResultMessage;
				if (replacedNow.has(index)) continue;
				expect((entries[index] as Entry).round).not.toBe(newest);
				expect(state.settings.exemptTools).not.toContain(answer.toolName);
			}
			expect(decision.bytesAfter).toBeLessThan(decision.bytesBefore);
			decision.arguments.forEach((text, index) => {
				const original = JSON.parse((message.toolCalls[index] as { arguments: string }).arguments);
				expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(original));
			});
			const shownMessage = after[decision.entry];
			expect(shownMessage?.role === "assistant" && shownMessage.toolCalls.map((call) => call.arguments)).toEqual(
				decision.arguments,
			);
		}
		// Never larger; pairs intact; the cache gives what a fresh build gives.
		expect(size(after)).toBeLessThanOrEqual(size(before));
		expect(after).toHaveLength(entries.length);
		expectPairsIntact(after);
		expect(project([...entries], [...ledger], state.round)).toEqual(after);
		if (outcome.report)
			expect(outcome.report.toolResultBytesAfter).toBe(liveToolResultBytes(entries, ledger, state.round));

		// Monotone: what was replaced stays replaced, by the same bytes (or, across policies, by fewer).
		const current = new Map<number, string>();
		for (const [entry, decision] of currentDecisions(entries, ledger, state.round).entries()) {
			if (decision) current.set(entry, decision.placeholder);
		}
		for (const [entry, placeholder] of shown) {
			const now = current.get(entry);
			expect(now).toBeDefined();
			if (strictlyMonotone) expect(now).toBe(placeholder);
			else expect(Buffer.byteLength(now ?? "")).toBeLessThanOrEqual(Buffer.byteLength(placeholder));
		}
		shown = current;

		// Never an entry twice: at most a snip, then one final replacement.
		const reasons = new Map<number, string[]>();
		for (const decision of ledger) {
			const reason = decision.kind === "replace" ? decision.reason : decision.kind;
			if (decision.kind !== "checkpoint") reasons.set(decision.entry, [...(reasons.get(decision.entry) ?? []), reason]);
		}
		for (const list of reasons.values())
			expect(list.length === 1 || (list.length === 2 && list[0] === "snip")).toBe(true);

		// Spill files are named by ledger position alone, and a position never names two entries.
		const owners = new Map<number, number>();
		for (const decision of ledger) {
			if (decision.kind === "checkpoint" || !decision.spill) continue;
			expect(decision.spill.path).toBe(`/spill/session/${String(decision.spill.position).padStart(4, "0")}.txt`);
			expect(owners.get(decision.spill.position) ?? decision.entry).toBe(decision.entry);
			owners.set(decision.spill.position, decision.entry);
		}
		if (drawn.spill !== "on") expect(owners.size).toBe(0);
	}
}

describe("the engine contract", () => {
	for (const policy of POLICIES) {
		it(`${policy}: pure, monotone, never larger, idempotent, in-flight round untouched, pairs intact`, () => {
			fc.assert(
				fc.property(fc.array(round, { minLength: 1, maxLength: 10 }), settings, (rounds, drawn) =>
					checkSession(rounds, drawn, () => policy, true),
				),
				{ numRuns: 120 },
			);
		});
	}

	it("policies switched between rounds still never grow the request or bring text back", () => {
		fc.assert(
			fc.property(
				fc.array(round, { minLength: 1, maxLength: 10 }),
				settings,
				fc.array(fc.constantFrom(...POLICIES), { minLength: 10, maxLength: 10 }),
				(rounds, drawn, chosen) => checkSession(rounds, drawn, (index) => chosen[index] ?? "off", false),
			),
			{ numRuns: 150 },
		);
	});
});
