// The engine benchmark (`npm run bench:engine`): a synthetic 2,000-round session with about 20 MB of tool output,
// replayed through every policy round by round — run the policy, append its decisions, project — to show that
// building a request costs about as much as serialising it, not as much as re-reading the whole history.
// Not a test: it prints timings and checks nothing. Deterministic input (seeded), so runs are comparable.
import { performance } from "node:perf_hooks";
import { runPolicy } from "../context/engine.js";
import type { Decision, Entry } from "../context/ledger.js";
import type { PolicyState } from "../context/policies.js";
import { project } from "../context/project.js";
import { type ContextPolicy, type ContextSettings, DEFAULT_CONTEXT_SETTINGS } from "../context/settings.js";
import type { Message } from "../llm/types.js";

const ROUNDS = 2000;
const SEED = 0x5eed;
/** The projection may cost at most this many times JSON.stringify of the same messages. */
const TARGET_RATIO = 2;

const TOOLS: PolicyState["tools"] = {
	read_file: { readOnly: true },
	grep: { readOnly: true },
	fetch_url: { readOnly: true },
	shell: { readOnly: false },
};

const CASES: [string, Partial<ContextSettings> & { policy: ContextPolicy }][] = [
	["off", { policy: "off" }],
	["rounds (keep 6)", { policy: "rounds" }],
	["budget 60K/30K keep 3", { policy: "budget", historyBudgetBytes: 60_000, historyBudgetLowBytes: 30_000 }],
	["ratio (window 200K)", { policy: "ratio", contextWindow: 200_000 }],
	["mask (keep 10)", { policy: "mask" }],
	["clear (100K/3/20K)", { policy: "clear" }],
	["auto (keep 5, 200K)", { policy: "auto", contextWindow: 200_000 }],
];

/** mulberry32: a small seeded generator, uniform in [0, 1). */
function random(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let value = state;
		value = Math.imul(value ^ (value >>> 15), value | 1);
		value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
		return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
	};
}

/** The session's messages, round by round; sizes mixed: mostly small, some medium, a few large results. */
function synthesize(): Entry[][] {
	const next = random(SEED);
	const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
	const words = [
		"const",
		"return",
		"error",
		"value",
		"import",
		"test",
		"passed",
		"failed",
		"src",
		"node",
		"=>",
		"{",
		"}",
	];
	const lines = Array.from({ length: 4096 }, (_, index) => {
		const width = 2 + Math.floor(next() * 14);
		return `${index}: ${Array.from({ length: width }, () => pick(words)).join(" ")}\n`;
	});
	const output = (bytes: number) => {
		let text = "";
		while (text.length < bytes) text += pick(lines);
		return text.slice(0, bytes);
	};
	const size = () => {
		const roll = next();
		if (roll < 0.7) return 100 + Math.floor(next() * 2900);
		if (roll < 0.95) return 3000 + Math.floor(next() * 9000);
		return 15_000 + Math.floor(next() * 50_000);
	};
	const rounds: Entry[][] = [];
	for (let round = 1; round <= ROUNDS; round++) {
		const entries: Entry[] = [];
		if (round % 50 === 1)
			entries.push({ round, message: { role: "user", content: [{ type: "text", text: `task ${round}` }] } });
		const calls = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, index) => ({
			id: `call_${round}_${index}`,
			name: pick(Object.keys(TOOLS)),
			// one call in six writes a file: its content is a long argument (elided with its result by rounds and auto)
			arguments: JSON.stringify({
				path: `src/file-${Math.floor(next() * 500)}.ts`,
				...(next() < 1 / 6 ? { content: output(500 + Math.floor(next() * 4500)) } : {}),
			}),
		}));
		entries.push({ round, message: { role: "assistant", text: "", toolCalls: calls } });
		for (const call of calls) {
			const message: Message = {
				role: "tool",
				toolCallId: call.id,
				toolName: call.name,
				content: output(size()),
				isError: next() < 0.05,
			};
			entries.push({ round, message });
		}
		rounds.push(entries);
	}
	return rounds;
}

interface Timings {
	roundMs: number[];
	projectMs: number;
	stringifyMs: number;
	decisions: number;
	lastRequestBytes: number;
}

/** Replays the session through one policy; fresh entry objects so no cache carries over from another case. */
function replay(session: Entry[][], overrides: Partial<ContextSettings>): Timings {
	const settings: ContextSettings = { ...DEFAULT_CONTEXT_SETTINGS, spillDir: "/tmp/snowpea-bench/spill", ...overrides };
	const entries: Entry[] = [];
	const ledger: Decision[] = [];
	const timings: Timings = { roundMs: [], projectMs: 0, stringifyMs: 0, decisions: 0, lastRequestBytes: 0 };
	let previousChars = 0;
	for (const [index, roundEntries] of session.entries()) {
		let newChars = 0;
		for (const entry of roundEntries) {
			entries.push({ message: { ...entry.message }, round: entry.round });
			newChars += JSON.stringify(entry.message).length;
		}
		const promptTokens = Math.ceil((previousChars + newChars) / 4);
		const state: PolicyState = { entries, ledger, round: index + 2, settings, promptTokens, tools: TOOLS };

		const start = performance.now();
		const { decisions } = runPolicy(state);
		ledger.push(...decisions);
		const projecting = performance.now();
		const messages = project(entries, ledger, state.round);
		const projected = performance.now();
		const json = JSON.stringify(messages);
		const stringified = performance.now();

		timings.roundMs.push(projected - start);
		timings.projectMs += projected - projecting;
		timings.stringifyMs += stringified - projected;
		timings.decisions += decisions.length;
		timings.lastRequestBytes = Buffer.byteLength(json);
		previousChars = json.length;
	}
	return timings;
}

function percentile(values: number[], share: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

function main(): void {
	const session = synthesize();
	const toolBytes = session
		.flat()
		.reduce((sum, entry) => sum + (entry.message.role === "tool" ? Buffer.byteLength(entry.message.content) : 0), 0);
	const results = session.flat().filter((entry) => entry.message.role === "tool").length;
	console.log(
		`engine benchmark: ${ROUNDS} rounds, ${results} tool results, ${(toolBytes / 1e6).toFixed(1)} MB of tool output`,
	);
	console.log(
		"per round = run the policy + project; ratio = projection time / JSON.stringify time of the same messages\n",
	);

	const widths = [24, 10, 13, 8, 8, 6];
	const line = (cells: string[]) =>
		cells
			.map((cell, column) => (column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0)))
			.join("  ");
	console.log(line(["policy", "decisions", "last request", "p50 ms", "p99 ms", "ratio"]));
	console.log(widths.map((width) => "-".repeat(width)).join("  "));
	let worst = 0;
	for (const [name, overrides] of CASES) {
		const timings = replay(session, overrides);
		const ratio = timings.projectMs / timings.stringifyMs;
		worst = Math.max(worst, ratio);
		console.log(
			line([
				name,
				String(timings.decisions),
				`${(timings.lastRequestBytes / 1e6).toFixed(2)} MB`,
				percentile(timings.roundMs, 0.5).toFixed(3),
				percentile(timings.roundMs, 0.99).toFixed(3),
				ratio.toFixed(2),
			]),
		);
	}
	console.log(
		`\nworst ratio ${worst.toFixed(2)} (target ≤ ${TARGET_RATIO}): ${worst <= TARGET_RATIO ? "ok" : "over target"}`,
	);
}

main();
