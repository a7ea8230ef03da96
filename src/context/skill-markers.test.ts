import { describe, expect, it } from "vitest";
import type { Message } from "../llm/types.js";
import { runPolicy } from "./engine.js";
import type { Entry } from "./ledger.js";
import { project } from "./project.js";
import { DEFAULT_CONTEXT_SETTINGS } from "./settings.js";
import { skillDecisions } from "./skill-markers.js";

function session(views: string[]): Entry[] {
	const entries: Entry[] = [{ message: { role: "user", content: [{ type: "text", text: "go" }] }, round: 1 }];
	views.forEach((name, index) => {
		const round = index + 1;
		const id = `v${round}`;
		entries.push({
			message: {
				role: "assistant",
				text: "",
				toolCalls: [{ id, name: "skill_view", arguments: JSON.stringify({ name }) }],
			},
			round,
		});
		const result: Message = {
			role: "tool",
			toolCallId: id,
			toolName: "skill_view",
			content: `Skill "${name}"\n${"step\n".repeat(200)}`,
			isError: false,
		};
		entries.push({ message: result, round });
	});
	return entries;
}

describe("skill_view bodies", () => {
	it("keep the newest protectRecentViews views and turn older ones into a reload marker, once", () => {
		const entries = session(["release", "deploy", "triage", "review"]);
		const decisions = skillDecisions(entries, [], 5, 2);
		expect(decisions.map((decision) => [decision.entry, decision.placeholder])).toEqual([
			[2, '[skill release body pruned — call skill_view("release") to reload it]'],
			[4, '[skill deploy body pruned — call skill_view("deploy") to reload it]'],
		]);
		expect(skillDecisions(entries, decisions, 6, 2)).toEqual([]);
	});

	it("apply under every policy, including off, while the policies themselves leave skill_view alone", () => {
		const entries = session(["a", "b", "c"]);
		for (const policy of ["off", "rounds", "auto"] as const) {
			const settings = { ...DEFAULT_CONTEXT_SETTINGS, policy, keepToolRounds: 0 };
			const { decisions } = runPolicy({ entries, ledger: [], round: 4, settings, promptTokens: 0, tools: {} });
			expect(decisions.map((decision) => [decision.entry, decision.kind === "replace" && decision.reason])).toEqual([
				[2, "skill"],
			]);
			const texts = project(entries, decisions, 4)
				.filter((message) => message.role === "tool")
				.map((message) => message.content);
			expect(texts[0]).toMatch(/^\[skill a body pruned/);
			expect(texts[1]).toMatch(/^Skill "b"/);
		}
	});
});
