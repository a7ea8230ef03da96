import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AssistantMessage, emptyUsage, type Provider } from "../llm/types.js";
import { defineTool } from "../tools/tool.js";
import { Toolset } from "../tools/toolset.js";
import type { AgentEvent } from "./events.js";
import { runTurn, userText } from "./loop.js";
import {
	isPermissionMode,
	type PermissionSubject,
	permissionExplanation,
	permissionVerdict,
	summarizeArguments,
} from "./permissions.js";

const cwd = "/work/project";
const read: PermissionSubject = { name: "read_file", permission: "read" };
const write: PermissionSubject = { name: "write_file", permission: "write" };
const shell: PermissionSubject = { name: "shell", permission: "exec" };
const code: PermissionSubject = { name: "execute_code", permission: "exec" };
const browser: PermissionSubject = { name: "browser_open", permission: "network" };
const at = (path: string) => JSON.stringify({ path, content: "x" });

describe("permissionVerdict", () => {
	it("auto runs everything", () => {
		for (const tool of [read, write, shell, code, browser]) {
			expect(permissionVerdict("auto", tool, at("/etc/passwd"), cwd)).toBe("allow");
		}
	});

	it("accept runs reads anywhere and writes inside the working directory", () => {
		expect(permissionVerdict("accept", read, at("/etc/hosts"), cwd)).toBe("allow");
		expect(permissionVerdict("accept", write, at("src/a.ts"), cwd)).toBe("allow");
		expect(permissionVerdict("accept", write, at("/work/project/deep/b.ts"), cwd)).toBe("allow");
	});

	it("accept asks for shell, code, network and writes outside the working directory", () => {
		expect(permissionVerdict("accept", shell, JSON.stringify({ command: "ls" }), cwd)).toBe("ask");
		expect(permissionVerdict("accept", code, JSON.stringify({ code: "print(1)" }), cwd)).toBe("ask");
		expect(permissionVerdict("accept", browser, JSON.stringify({ url: "https://example.com" }), cwd)).toBe("ask");
		expect(permissionVerdict("accept", write, at("../other/a.ts"), cwd)).toBe("ask");
		expect(permissionVerdict("accept", write, at("/tmp/a.ts"), cwd)).toBe("ask");
		expect(permissionVerdict("accept", write, at("~/notes.md"), cwd)).toBe("ask");
		// a sibling directory sharing the prefix is outside
		expect(permissionVerdict("accept", write, at("/work/project-two/a.ts"), cwd)).toBe("ask");
	});

	it("accept asks for a write whose path it cannot read", () => {
		expect(permissionVerdict("accept", write, "{not json", cwd)).toBe("ask");
		expect(permissionVerdict("accept", write, JSON.stringify({ content: "x" }), cwd)).toBe("ask");
	});

	it("plan allows reads and network, denies exec", () => {
		expect(permissionVerdict("plan", read, at("a.ts"), cwd)).toBe("allow");
		expect(permissionVerdict("plan", browser, "{}", cwd)).toBe("allow");
		expect(permissionVerdict("plan", shell, JSON.stringify({ command: "ls" }), cwd)).toBe("deny");
		expect(permissionVerdict("plan", code, JSON.stringify({ code: "1" }), cwd)).toBe("deny");
	});

	it("plan writes only *.md, *.txt and .snowpea/plans/**", () => {
		expect(permissionVerdict("plan", write, at("notes.md"), cwd)).toBe("allow");
		expect(permissionVerdict("plan", write, at("docs/TODO.TXT"), cwd)).toBe("allow");
		expect(permissionVerdict("plan", write, at(".snowpea/plans/step-1.json"), cwd)).toBe("allow");
		expect(permissionVerdict("plan", write, at("src/main.ts"), cwd)).toBe("deny");
		expect(permissionVerdict("plan", write, at(".snowpea/plans"), cwd)).toBe("deny");
		expect(permissionVerdict("plan", write, at(".snowpea/settings.json"), cwd)).toBe("deny");
		expect(permissionVerdict("plan", write, at("notes.md.ts"), cwd)).toBe("deny");
		expect(permissionVerdict("plan", write, "{}", cwd)).toBe("deny");
		// an allowed name outside the working directory still needs approval
		expect(permissionVerdict("plan", write, at("/tmp/plan.md"), cwd)).toBe("ask");
	});
});

describe("permissionExplanation", () => {
	it("tells a headless run how to allow the call", () => {
		const text = permissionExplanation("accept", shell, JSON.stringify({ command: "ls" }), cwd, {
			audience: "headless",
		});
		expect(text).toContain("--mode auto");
		expect(text).toContain("shell");
		expect(text).not.toContain("\n");
	});

	it("tells a child agent it cannot ask, and to report the need instead of suggesting flags it cannot use", () => {
		const text = permissionExplanation("accept", shell, JSON.stringify({ command: "ls" }), cwd, { audience: "child" });
		expect(text).toContain("a child agent cannot ask");
		expect(text).toContain("report");
		expect(text).not.toContain("--mode");
		expect(text).not.toContain("headless");
		const plan = permissionExplanation("plan", write, at("src/a.ts"), cwd, { audience: "child" });
		expect(plan).toContain("delegating agent's session is in plan mode");
		expect(plan).not.toContain("/mode");
	});

	it("names plan mode's rules and the path refused", () => {
		const text = permissionExplanation("plan", write, at("src/a.ts"), cwd, { audience: "person" });
		expect(text).toContain("plan mode");
		expect(text).toContain("src/a.ts");
		expect(text).toContain("/mode accept");
	});
});

describe("summarizeArguments", () => {
	it("shows a shell call's command and a write's path", () => {
		expect(summarizeArguments(shell, JSON.stringify({ command: "rm -rf build\n&& ls" }))).toBe("rm -rf build && ls");
		expect(summarizeArguments(write, at("a/b.ts"))).toBe("a/b.ts");
		expect(summarizeArguments(browser, '{"url":"x"}')).toBe('{"url":"x"}');
		expect(summarizeArguments(shell, JSON.stringify({ command: "x".repeat(300) }), 20)).toHaveLength(20);
	});
});

describe("isPermissionMode", () => {
	it("knows the three modes", () => {
		expect(["plan", "accept", "auto", "yolo", 1].map(isPermissionMode)).toEqual([true, true, true, false, false]);
	});
});

describe("the loop's approve hook", () => {
	const ran: string[] = [];
	const touch = defineTool({
		name: "touch",
		description: "touch a file",
		parameters: z.object({ path: z.string() }),
		permission: "write",
		readOnly: false,
		async run({ path }) {
			ran.push(path);
			return { ok: true, content: `touched ${path}` };
		},
	});
	const replies: AssistantMessage[] = [
		{
			role: "assistant",
			text: "",
			toolCalls: [
				{ id: "a", name: "touch", arguments: at("notes.md") },
				{ id: "b", name: "touch", arguments: at("main.ts") },
			],
		},
		{ role: "assistant", text: "done", toolCalls: [] },
	];
	const provider: Provider = {
		name: "scripted",
		model: "m",
		async *stream() {
			const reply = replies.shift() as AssistantMessage;
			yield { type: "done", message: reply, stopReason: "stop", usage: emptyUsage() };
		},
	};

	it("runs approved calls and answers refused ones with permission_denied and the explanation", async () => {
		const asked: string[] = [];
		const events: AgentEvent[] = [];
		for await (const event of runTurn({
			provider,
			toolset: new Toolset([touch], { deferred: false, eager: [] }),
			system: [{ tier: "stable", text: "sys" }],
			history: [],
			input: userText("go"),
			sessionId: "s",
			firstRound: 1,
			maxToolRounds: 5,
			signal: new AbortController().signal,
			toolContext: { cwd, home: "/tmp", sessionId: "s", spillDir: "/tmp/spill" },
			approve: async (call, tool) => {
				asked.push(`${tool.name}:${call.id}`);
				const verdict = permissionVerdict("plan", tool, call.arguments, cwd);
				return verdict === "allow"
					? { allow: true }
					: {
							allow: false,
							message: permissionExplanation("plan", tool, call.arguments, cwd, { audience: "headless" }),
						};
			},
		}))
			events.push(event);
		expect(asked).toEqual(["touch:a", "touch:b"]);
		expect(ran).toEqual(["notes.md"]);
		const results = events.filter((event) => event.type === "tool.result");
		expect(results.map((event) => [event.ok, event.errorCode])).toEqual([
			[true, undefined],
			[false, "permission_denied"],
		]);
		expect(results[1]?.type === "tool.result" && results[1].output).toMatch(/main\.ts is not allowed in plan mode/);
	});
});
