import { describe, expect, it } from "vitest";
import type { PermissionMode } from "../../agent/permissions.js";
import type { ToolCall } from "../../llm/types.js";
import type { Tool } from "../../tools/tool.js";
import { type ApprovalAnswer, type ApprovalBody, ApprovalGate, sessionApprovals } from "./approval.js";

const tool = (name: string, permission: Tool["permission"]) => ({ name, permission }) as Tool;
const shell = tool("shell", "exec");
const write = tool("write_file", "write");
const read = tool("read_file", "read");
const call = (args: unknown, id = "c1"): ToolCall => ({ id, name: "x", arguments: JSON.stringify(args) });

function gate(mode: PermissionMode, answers: ApprovalAnswer[] | undefined) {
	const recorded: ApprovalBody[] = [];
	const asked: string[] = [];
	const instance = new ApprovalGate({
		mode: () => mode,
		cwd: "/work",
		record: (body) => recorded.push(body),
		ask: answers
			? async (request) => {
					asked.push(`${request.tool}: ${request.summary}`);
					await new Promise((resolve) => setTimeout(resolve, 1));
					return answers.shift() ?? "no";
				}
			: undefined,
	});
	return { instance, recorded, asked };
}

describe("ApprovalGate", () => {
	it("runs what the mode allows without asking or recording", async () => {
		const { instance, recorded, asked } = gate("accept", []);
		expect(await instance.approve(call({ path: "a.txt" }), read)).toEqual({ allow: true });
		expect(await instance.approve(call({ path: "src/a.ts", content: "" }), write)).toEqual({ allow: true });
		expect(asked).toEqual([]);
		expect(recorded).toEqual([]);
	});

	it("asks, and records yes and no with their scope", async () => {
		const { instance, recorded, asked } = gate("accept", ["yes", "no"]);
		expect(await instance.approve(call({ command: "make test" }), shell)).toEqual({ allow: true });
		const refused = await instance.approve(call({ command: "rm -rf /" }), shell);
		expect(refused.allow).toBe(false);
		expect(refused.message).toMatch(/^permission denied: the user did not approve shell/);
		expect(asked).toEqual(["shell: make test", "shell: rm -rf /"]);
		expect(recorded).toEqual([
			{ tool: "shell", arguments: "make test", verdict: "allow", scope: "once", mode: "accept" },
			{ tool: "shell", arguments: "rm -rf /", verdict: "deny", scope: "once", mode: "accept" },
		]);
	});

	it("remembers 'always' for the tool, and asks one question at a time for parallel calls", async () => {
		const { instance, recorded, asked } = gate("accept", ["always"]);
		const verdicts = await Promise.all([
			instance.approve(call({ command: "one" }), shell),
			instance.approve(call({ command: "two" }), shell),
		]);
		expect(verdicts).toEqual([{ allow: true }, { allow: true }]);
		expect(await instance.approve(call({ command: "three" }), shell)).toEqual({ allow: true });
		expect(asked).toEqual(["shell: one"]);
		expect(recorded).toEqual([{ tool: "shell", arguments: "one", verdict: "allow", scope: "session", mode: "accept" }]);
		expect(sessionApprovals(recorded.map((body) => ({ kind: "approval", body })))).toEqual(["shell"]);
	});

	it("refuses without asking where nobody can answer, explaining how to allow it", async () => {
		const { instance, recorded } = gate("accept", undefined);
		const refused = await instance.approve(call({ command: "ls" }), shell);
		expect(refused.allow).toBe(false);
		expect(refused.message).toContain("--mode auto");
		expect(recorded).toEqual([{ tool: "shell", arguments: "ls", verdict: "deny", scope: "mode", mode: "accept" }]);
	});

	it("refuses plan-mode denials without asking", async () => {
		const { instance, asked } = gate("plan", ["yes"]);
		const refused = await instance.approve(call({ command: "ls" }), shell);
		expect(refused.allow).toBe(false);
		expect(refused.message).toContain("/mode accept");
		expect(asked).toEqual([]);
	});

	it("refuses without asking or recording once the turn's signal has fired", async () => {
		const { instance, asked, recorded } = gate("accept", ["yes"]);
		const controller = new AbortController();
		controller.abort();
		expect(await instance.approve(call({ command: "ls" }), shell, controller.signal)).toEqual({
			allow: false,
			message: "not run: the turn was stopped",
		});
		expect(asked).toEqual([]);
		expect(recorded).toEqual([]);
	});
});
