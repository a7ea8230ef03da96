import { describe, expect, it } from "vitest";
import { filler, type Line, toolTurn, trajectoryOf } from "../../test/support/bench-trajectories.js";
import { PRICE_SHEETS } from "../context/cost.js";
import { benchSettings } from "./bench-policies.js";
import { buildRecallIndex, distinctiveTokens, recallOfRequest } from "./recall.js";
import { prepareReplay, replayPolicy } from "./replay.js";
import { REREAD_CALL_TOKENS, RereadEstimate } from "./rereads.js";

const recallOf = (lines: Line[], settings: Parameters<typeof benchSettings>[0]["settings"]) => {
	const context = prepareReplay(trajectoryOf(lines), { sheet: PRICE_SHEETS.anthropic });
	const run = replayPolicy(context, "test", benchSettings({ name: "test", settings }));
	const kept = run.requests.reduce((sum, request) => sum + request.kept, 0);
	const counted = run.requests.reduce((sum, request) => sum + request.counted, 0);
	return { kept, counted, recall: counted === 0 ? 1 : kept / counted };
};

/** Reads a file whose output names a deep path, runs unrelated commands, then edits that path. */
function pathUsedLater(unrelatedRounds: number): Line[] {
	const lines: Line[] = [
		{ role: "system", content: "You are a coding agent." },
		{ role: "user", content: "The config loader crashes on empty files. Fix it." },
		...toolTurn(
			"find",
			"bash",
			{ command: "grep -rn 'def load' ." },
			`./src/settings/config_loader.py:42: def load_config(path):\n${filler("grep", 40)}`,
		),
	];
	for (let round = 0; round < unrelatedRounds; round++) {
		lines.push(...toolTurn(`u${round}`, "bash", { command: `echo ${round}` }, filler(`noise${round}`, 40)));
	}
	lines.push(
		...toolTurn(
			"edit",
			"str_replace_editor",
			{ command: "str_replace", path: "src/settings/config_loader.py", old_str: "x", new_str: "y" },
			"edited",
			"Now I patch load_config in src/settings/config_loader.py.",
		),
	);
	return lines;
}

describe("distinctive tokens", () => {
	it("takes identifiers, paths and numbers of four or more characters, not plain words", () => {
		const tokens = distinctiveTokens(
			"Edit /testbed/requests/auth.py: HTTPDigestAuth.build_digest_header returns 401 or 12345; return the Header.",
		);
		expect([...tokens]).toEqual(
			expect.arrayContaining([
				"testbed/requests/auth.py",
				"auth.py",
				"HTTPDigestAuth.build_digest_header",
				"HTTPDigestAuth",
				"build_digest_header",
				"12345",
			]),
		);
		for (const word of ["Edit", "returns", "return", "Header", "401", "testbed", "requests"]) {
			expect(tokens.has(word)).toBe(false);
		}
	});
});

describe("recall", () => {
	it("counts a path read in a tool result and used later; 1.0 under off", () => {
		const index = buildRecallIndex(trajectoryOf(pathUsedLater(8)));
		expect(index.turns.at(-1)).toEqual(
			expect.arrayContaining(["src/settings/config_loader.py", "config_loader.py", "config_loader"]),
		);
		expect(index.turns.at(-1)).toContain("load_config");
		const off = recallOf(pathUsedLater(8), { policy: "off" });
		expect(off.counted).toBeGreaterThan(0);
		expect(off.recall).toBe(1);
	});

	it("is lower when the result that supplied the path was replaced", () => {
		const rounds = recallOf(pathUsedLater(8), { policy: "rounds", keepToolRounds: 2 });
		expect(rounds.recall).toBeLessThan(1);
		const masked = recallOf(pathUsedLater(8), { policy: "mask", maskKeep: 1 });
		expect(masked.kept).toBe(0);
		// kept when the window still covers the read
		expect(recallOf(pathUsedLater(1), { policy: "rounds", keepToolRounds: 6 }).recall).toBe(1);
	});

	it("does not count tokens the task or the system prompt already gave", () => {
		const lines = pathUsedLater(3);
		lines[1] = { role: "user", content: "Fix load_config in src/settings/config_loader.py." };
		const index = buildRecallIndex(trajectoryOf(lines));
		expect(index.turns.flat()).not.toContain("load_config");
		expect(index.turns.flat()).not.toContain("src/settings/config_loader.py");
	});

	it("counts a token as gone once the only call argument that still carried it is elided", () => {
		// the read's output names the path; a later write repeats it inside a long content argument; the read is pruned
		const write = (content: string) => ({ path: "notes.txt", content });
		const lines: Line[] = [
			{ role: "system", content: "You are a coding agent." },
			{ role: "user", content: "Record where the loader lives." },
			...toolTurn(
				"find",
				"bash",
				{ command: "grep -rn 'def load' ." },
				`./src/settings/config_loader.py:42\n${filler("grep", 20)}`,
			),
			...toolTurn("note", "write_file", write(`${filler("pad", 30)}\nsee src/settings/config_loader.py\n`), "ok"),
		];
		for (let round = 0; round < 6; round++)
			lines.push(...toolTurn(`u${round}`, "bash", { command: `echo ${round}` }, filler(`noise${round}`, 40)));
		lines.push(
			...toolTurn(
				"use",
				"bash",
				{ command: "python -m src.settings.config_loader" },
				"done",
				"Using src/settings/config_loader.py.",
			),
		);
		const kept = recallOf(lines, { policy: "rounds", keepToolRounds: 2, elideArgumentChars: 0 });
		const elided = recallOf(lines, { policy: "rounds", keepToolRounds: 2, elideArgumentChars: 500 });
		expect(kept.recall).toBe(1);
		expect(elided.recall).toBeLessThan(1);
	});

	it("names the result the agent would read again for what was gone, and prices that re-read once", () => {
		const lines = pathUsedLater(8);
		const context = prepareReplay(trajectoryOf(lines), { sheet: PRICE_SHEETS.anthropic });
		const index = context.recall;
		const last = index.turns.length;
		// the grep result holds the path
		const grepResult = context.trajectory.entries.findIndex(
			(entry) => entry.message.role === "tool" && entry.message.content.includes("config_loader.py:42"),
		);
		const hidden = context.trajectory.entries.map((_, entry) =>
			entry === grepResult ? ({ kind: "replace", placeholder: "[gone]" } as never) : undefined,
		);
		const recall = recallOfRequest(index, last, hidden);
		expect(recall.kept).toBe(0);
		expect(recall.missing).toEqual([grepResult]);
		expect(recallOfRequest(index, last, []).missing).toEqual([]);

		const estimate = new RereadEstimate(context);
		const tokens = context.count((context.trajectory.entries[grepResult]?.message as { content: string }).content);
		// the last request: written once, carried by no later request, plus the call's output tokens
		expect(estimate.price(last, recall.missing)).toBeCloseTo((tokens * 1.25 * 3 + REREAD_CALL_TOKENS * 15) / 1e6, 12);
		expect(estimate.price(last, recall.missing)).toBe(0);

		const rounds = recallOf(lines, { policy: "rounds", keepToolRounds: 2 });
		const run = replayPolicy(
			context,
			"rounds",
			benchSettings({ name: "rounds", settings: { policy: "rounds", keepToolRounds: 2 } }),
		);
		expect(rounds.recall).toBeLessThan(1);
		expect(run.requests.reduce((sum, request) => sum + request.reread, 0)).toBeGreaterThan(0);
		const off = replayPolicy(context, "off", benchSettings({ name: "off", settings: { policy: "off" } }));
		expect(off.requests.every((request) => request.reread === 0)).toBe(true);
	});
});
