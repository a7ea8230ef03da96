import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUILTIN_ROLES, budgetLine, CHILD_PREAMBLE } from "../../src/agent/roles.js";
import { BUDGET_SPENT_MESSAGE } from "../../src/cli/children.js";
import { SessionStore } from "../../src/session/store.js";
import { cliBuilt, cliEnv, runCli, tempDir } from "../support/cli.js";
import {
	type FakeProvider,
	type RecordedRequest,
	type ScriptStep,
	startFakeProvider,
} from "../support/fake-provider.js";

interface WireMessage {
	role: string;
	content: unknown;
}

const READ_ONLY_TOOLS = ["read_file", "view_image", "grep", "glob", "list_dir", "tool_search"];
const explore = BUILTIN_ROLES.find((role) => role.name === "explore")!;

const messagesOf = (request: RecordedRequest) => (request.body.messages ?? []) as WireMessage[];
const toolNames = (request: RecordedRequest) =>
	((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
const textOf = (content: unknown): string =>
	typeof content === "string"
		? content
		: Array.isArray(content)
			? content.map((part: { text?: string }) => part.text ?? "").join("")
			: "";
const systemText = (request: RecordedRequest) => textOf(messagesOf(request)[0]?.content);
const firstUser = (request: RecordedRequest) =>
	textOf(messagesOf(request).find((message) => message.role === "user")?.content);
const isChild = (request: RecordedRequest) => systemText(request).includes(CHILD_PREAMBLE);
const toolResults = (request: RecordedRequest) =>
	messagesOf(request)
		.filter((message) => message.role === "tool")
		.map((message) => textOf(message.content));
const delegate = (task: string, extra: Record<string, unknown> = {}) => ({
	name: "delegate_task",
	arguments: JSON.stringify({ task, agent: "explore", ...extra }),
});

/** A git repository with a root AGENTS.md, a nested pkg/AGENTS.md, a skill and a file to find. */
function project(settings?: unknown): string {
	const root = realpathSync(tempDir());
	execFileSync("git", ["init", "-q", root]);
	const write = (path: string, text: string) => {
		mkdirSync(dirname(join(root, path)), { recursive: true });
		writeFileSync(join(root, path), text);
	};
	write("AGENTS.md", "ROOT RULES: tabs everywhere.");
	write("pkg/AGENTS.md", "PKG RULES: nested package conventions.");
	write("pkg/index.ts", "export const answer = 42;\n");
	write(".snowpea/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: ships the app\n---\nRun deploy.sh.");
	if (settings !== undefined) write(".snowpea/settings.json", JSON.stringify(settings));
	return root;
}

/**
 * A parent that delegates `calls` in its first answer and finishes once it has their results; children answered by
 * `child`.
 */
function parentAnd(
	calls: ReturnType<typeof delegate>[],
	child: (request: RecordedRequest) => ScriptStep,
): (request: RecordedRequest) => ScriptStep {
	return (request) => {
		if (isChild(request)) return child(request);
		return toolResults(request).length === 0 ? { toolCalls: calls } : { text: "the children reported" };
	};
}

async function run(work: string, home: string, fake: FakeProvider, prompt = "delegate") {
	const result = await runCli(["run", "--mode", "auto", "--model", "openai:gpt-4o", prompt], {
		env: cliEnv(home, fake),
		cwd: work,
	});
	expect(result.code, result.stderr).toBe(0);
	return result;
}

describe.skipIf(!cliBuilt)("delegate_task and lean child agents, end to end", () => {
	let fake: FakeProvider;
	afterEach(async () => {
		await fake?.close();
	});

	it("three explore children share one prompt prefix: the 2nd and 3rd read it from the provider's cache", async () => {
		const work = project();
		const home = tempDir();
		fake = await startFakeProvider({
			respond: parentAnd(
				[delegate("brief A: find answer"), delegate("brief B: find tabs"), delegate("brief C")],
				(r) => ({
					text: `report ${/brief (\w)/.exec(firstUser(r))?.[1]}`,
				}),
			),
		});
		await run(work, home, fake);

		const children = fake.requests.filter(isChild);
		const parents = fake.requests.filter((request) => !isChild(request));
		expect(children).toHaveLength(3);
		expect(parents).toHaveLength(2);
		expect(toolNames(parents[0]!)).toContain("delegate_task");

		// Exactly the read-only set, identical system prompts and tools; the brief and budget only in the first message.
		const [first, second, third] = children as [RecordedRequest, RecordedRequest, RecordedRequest];
		for (const child of children) {
			expect(toolNames(child)).toEqual(READ_ONLY_TOOLS);
			expect(systemText(child)).toBe(systemText(first));
			expect(JSON.stringify(child.body.tools)).toBe(JSON.stringify(first.body.tools));
			expect(systemText(child)).toContain(`${CHILD_PREAMBLE}\n\n${explore.prompt}`);
			expect(systemText(child)).not.toContain("tool rounds for this task");
			expect(messagesOf(child).map((message) => message.role)).toEqual(["system", "user"]);
			expect(firstUser(child)).toMatch(new RegExp(`^brief [ABC].*\\n\\n${budgetLine(explore.maxRounds)}$`));
		}
		const letters = children.map((child) => /brief (\w)/.exec(firstUser(child))?.[1]).sort();
		expect(letters).toEqual(["A", "B", "C"]);

		// The cache effect: the shared prefix (tools + system message) is paid in full once.
		const sharedTokens = Math.floor(
			Buffer.byteLength(JSON.stringify(first.body.tools) + JSON.stringify(messagesOf(first)[0])) / 4,
		);
		expect(first.cachedTokens).toBeLessThan(sharedTokens);
		expect(second.cachedTokens).toBeGreaterThanOrEqual(sharedTokens);
		expect(third.cachedTokens).toBeGreaterThanOrEqual(sharedTokens);

		// The parent reads each report with its status, rounds and the child's own token use.
		const results = toolResults(parents[1]!);
		expect(results).toHaveLength(3);
		for (const [index, letter] of ["A", "B", "C"].entries()) {
			const result = results[index]!;
			const child = children.find((request) => firstUser(request).startsWith(`brief ${letter}`))!;
			expect(result).toContain(`delegate_task explore: done in 1 of ${explore.maxRounds} rounds`);
			expect(result).toContain(`tokens: input ${child.promptTokens} (cache read ${child.cachedTokens})`);
			expect(result.endsWith(`Report:\nreport ${letter}`)).toBe(true);
		}

		// Children are stored, linked to the parent, hidden from the top-level list; their tokens are their own.
		const list = await runCli(["sessions", "list", "--json"], { env: cliEnv(home), cwd: work });
		const top = JSON.parse(list.stdout) as { id: string; parentId?: string }[];
		expect(top).toHaveLength(1);
		const parentId = top[0]!.id;
		const store = SessionStore.open(join(home, "state.db"));
		try {
			const stored = store.listSessions({ parentId });
			expect(stored).toHaveLength(3);
			for (const session of stored) {
				expect(session.parentId).toBe(parentId);
				expect(session.meta).toMatchObject({ role: "explore" });
				expect(store.usageTotals(session.id).requests).toBe(1);
			}
			expect(store.usageTotals(parentId).requests).toBe(2);
		} finally {
			store.close();
		}
	});

	it("children use the parent's MCP servers: one server process for the whole run, and a child's call reaches it", async () => {
		const work = project();
		const starts = join(tempDir(), "starts.log");
		const server = join(import.meta.dirname, "../support/mcp-test-server.mjs");
		writeFileSync(
			join(work, ".mcp.json"),
			JSON.stringify({
				mcpServers: { test: { command: process.execPath, args: [server], env: { MCP_TEST_START_LOG: starts } } },
			}),
		);
		const home = tempDir();
		const echo = (text: string) => ({ name: "mcp__test__echo", arguments: JSON.stringify({ text }) });
		fake = await startFakeProvider({
			respond: parentAnd([delegate("brief A"), delegate("brief B")], (request) => {
				const letter = /brief (\w)/.exec(firstUser(request))?.[1];
				return toolResults(request).length === 0
					? { toolCalls: [echo(`from child ${letter}`)] }
					: { text: `report ${letter}: ${toolResults(request).at(-1)}` };
			}),
		});
		await run(work, home, fake);
		expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
		const children = fake.requests.filter(isChild);
		// the read-only child sees only the read-only MCP tool (echo has readOnlyHint), deferred
		expect(systemText(children[0]!)).toContain("mcp:test (1)");
		const answers = children.flatMap((request) => toolResults(request));
		expect(answers.some((text) => text.includes("echo: from child A"))).toBe(true);
		expect(answers.some((text) => text.includes("echo: from child B"))).toBe(true);
	});

	it("a child's call that needs approval is refused in words for a child: report the need, no flags", async () => {
		const work = project();
		const home = tempDir();
		const shell = { name: "shell", arguments: JSON.stringify({ command: "touch made-by-child" }) };
		fake = await startFakeProvider({
			respond: parentAnd([delegate("brief A", { agent: "executor" })], (request) =>
				toolResults(request).length === 0 ? { toolCalls: [shell] } : { text: "report: could not run it" },
			),
		});
		const result = await runCli(["run", "--mode", "accept", "--model", "openai:gpt-4o", "delegate"], {
			env: cliEnv(home, fake),
			cwd: work,
		});
		expect(result.code, result.stderr).toBe(0);
		const refusal = fake.requests.filter(isChild).flatMap(toolResults).at(-1) ?? "";
		expect(refusal).toContain("needs approval in accept mode, and a child agent cannot ask for it");
		expect(refusal).not.toContain("--mode");
		expect(existsSync(join(work, "made-by-child"))).toBe(false);
	});

	it('lean children get root instructions only and no skills index; "full" children get the parent\'s', async () => {
		const prompts: Record<string, { system: string; tools: string[]; parent: string }> = {};
		for (const mode of ["lean", "full"] as const) {
			const work = project({ agents: { childContext: mode } });
			fake = await startFakeProvider({
				respond: parentAnd([delegate("brief: look at pkg")], () => ({ text: "seen" })),
			});
			await run(work, tempDir(), fake);
			const child = fake.requests.find(isChild)!;
			const parent = fake.requests.find((request) => !isChild(request))!;
			prompts[mode] = { system: systemText(child), tools: toolNames(child), parent: systemText(parent) };
			await fake.close();
		}
		const { lean, full } = prompts as Record<"lean" | "full", { system: string; tools: string[]; parent: string }>;
		const skillLine = "- deploy: ships the app";
		const nestedSection = "## pkg/AGENTS.md\n\nPKG RULES: nested package conventions.";

		// The parent itself always has everything.
		expect(lean.parent).toContain(skillLine);
		expect(lean.parent).toContain(nestedSection);

		expect(lean.system).toContain("## AGENTS.md\n\nROOT RULES: tabs everywhere.");
		expect(lean.system).not.toContain("PKG RULES");
		expect(lean.system).toContain("Nested instruction files not shown here");
		expect(lean.system).not.toContain("Skills (call skill_view");
		expect(lean.tools).toEqual(READ_ONLY_TOOLS);

		expect(full.system).toContain("## AGENTS.md\n\nROOT RULES: tabs everywhere.");
		expect(full.system).toContain(nestedSection);
		expect(full.system).toContain(`Skills (call skill_view(name) to load a skill's instructions`);
		expect(full.system).toContain(skillLine);
		// Still read-only, but with the parent's eager set (skill_view included).
		expect(full.tools).toEqual(["read_file", "view_image", "grep", "glob", "list_dir", "skill_view", "tool_search"]);

		for (const system of [lean.system, full.system]) {
			expect(system).toContain(`${CHILD_PREAMBLE}\n\n${explore.prompt}`);
		}
	});

	it("a child stopped at its budget is asked once without tools and reported as partial", async () => {
		const work = project();
		fake = await startFakeProvider({
			respond: parentAnd([delegate("brief: keep looking", { max_rounds: 2 })], (request) =>
				toolNames(request).length === 0
					? { text: "partial report: looked at two listings" }
					: {
							toolCalls: [
								{ name: "list_dir", arguments: JSON.stringify({ path: request.promptTokens % 2 ? "." : "pkg" }) },
							],
						},
			),
		});
		await run(work, tempDir(), fake);
		const children = fake.requests.filter(isChild);
		expect(children.map((request) => toolNames(request).length)).toEqual([6, 6, 0]);
		const last = children[2]!;
		expect(last.body.tools ?? []).toEqual([]);
		const lastUser = messagesOf(last)
			.filter((message) => message.role === "user")
			.at(-1);
		expect(textOf(lastUser?.content)).toBe(BUDGET_SPENT_MESSAGE);
		expect(firstUser(children[0]!)).toBe(`brief: keep looking\n\n${budgetLine(2)}`);

		const parentFinal = fake.requests.filter((request) => !isChild(request)).at(-1)!;
		const [result] = toolResults(parentFinal);
		expect(result).toContain(
			"delegate_task explore: partial: stopped at its budget of 2 rounds and was asked once for its report",
		);
		expect(result).toContain("3 requests");
		expect(result?.endsWith("Report:\npartial report: looked at two listings")).toBe(true);
	});

	it("a child whose provider fails is reported as failed, as an error result", async () => {
		const work = project();
		fake = await startFakeProvider({
			respond: parentAnd([delegate("brief: doomed")], () => ({
				status: 400,
				body: '{"error":{"message":"bad brief"}}',
			})),
		});
		await run(work, tempDir(), fake);
		const parentFinal = fake.requests.filter((request) => !isChild(request)).at(-1)!;
		const [result] = toolResults(parentFinal);
		expect(result).toMatch(/^delegate_task explore: failed after 1 rounds: .*bad brief/);
		expect(result).toContain("The child gave no report.");
	});
});
