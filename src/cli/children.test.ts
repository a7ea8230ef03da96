import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "../../test/support/fake-provider.js";
import type { PermissionMode } from "../agent/permissions.js";
import { BUILTIN_ROLES, loadAgentDefinitions, type RoleDefinition } from "../agent/roles.js";
import { SessionStore } from "../session/store.js";
import { assembleSession } from "./assemble.js";
import { createChildSpawner } from "./children.js";
import { SettingsSchema } from "./settings.js";

const role = (name: string) => BUILTIN_ROLES.find((candidate) => candidate.name === name) as RoleDefinition;
const toolNames = (request: RecordedRequest) =>
	((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

describe("child agents spawned in-process", () => {
	let fake: FakeProvider;
	let store: SessionStore | undefined;
	afterEach(async () => {
		store?.close();
		await fake?.close();
	});

	async function setup(options: { mode?: PermissionMode; agents?: Record<string, string> } = {}) {
		const cwd = realpathSync(mkdtempSync(join(tmpdir(), "snowpea-children-")));
		const home = mkdtempSync(join(tmpdir(), "snowpea-children-home-"));
		for (const [file, text] of Object.entries(options.agents ?? {})) {
			mkdirSync(join(cwd, ".snowpea", "agents"), { recursive: true });
			writeFileSync(join(cwd, ".snowpea", "agents", file), text);
		}
		const settings = SettingsSchema.parse({
			providers: { openai: { apiKey: "test-key", baseURL: fake.openaiBaseURL } },
		});
		store = SessionStore.open(join(home, "state.db"));
		const parent = store.createSession({ cwd, model: "openai:gpt-4o" });
		const spawn = createChildSpawner({
			store,
			parent,
			settings,
			modelId: "openai:gpt-4o",
			cwd,
			home,
			date: "2026-01-02",
			permissionMode: () => options.mode ?? "auto",
			assemble: assembleSession,
		});
		return { cwd, store, parent, spawn };
	}

	it("an executor child may write but gets neither delegate_task nor ask_user", async () => {
		fake = await startFakeProvider({ script: [{ text: "changed nothing" }] });
		const { spawn, store: sessions, parent } = await setup();
		const report = await spawn({ task: "do it", role: role("executor"), maxRounds: 3 }, new AbortController().signal);
		expect(report).toMatchObject({ status: "done", report: "changed nothing", rounds: 1 });
		expect(toolNames(fake.requests[0] as RecordedRequest)).toEqual([
			"read_file",
			"view_image",
			"write_file",
			"edit_file",
			"shell",
			"execute_code",
			"grep",
			"glob",
			"list_dir",
			"tool_search",
		]);
		const [child] = sessions.listSessions({ parentId: parent.id });
		expect(child?.id).toBe(report.childSessionId);
		expect(report.usage.requests).toBe(1);
	});

	it("a user-defined agent's tool list, narrowed by the call's, is exactly what the child gets", async () => {
		fake = await startFakeProvider({ script: [{ text: "ok" }] });
		const { spawn, cwd } = await setup({
			agents: { "docs.md": "---\ndescription: docs\ntools: read_file, write_file, grep\n---\nWrite docs." },
		});
		const [docs] = loadAgentDefinitions(cwd).definitions;
		const report = await spawn(
			{ task: "t", role: docs as RoleDefinition, tools: ["grep", "write_file", "browser_fly"], maxRounds: 2 },
			new AbortController().signal,
		);
		expect(report.status).toBe("done");
		expect(toolNames(fake.requests[0] as RecordedRequest)).toEqual(["write_file", "grep"]);
		expect(report.warnings).toEqual(["tools not available to this child: browser_fly"]);
		const system = String(((fake.requests[0] as RecordedRequest).body.messages as { content: string }[])[0]?.content);
		expect(system).toContain("Write docs.");
	});

	it("a child's calls pass a gate in the parent's permission mode, recorded in the child session", async () => {
		fake = await startFakeProvider({
			script: [
				{ toolCalls: [{ name: "shell", arguments: JSON.stringify({ command: "touch nope" }) }] },
				{ text: "could not run it" },
			],
		});
		const { spawn, store: sessions } = await setup({ mode: "plan" });
		const report = await spawn({ task: "t", role: role("executor"), maxRounds: 3 }, new AbortController().signal);
		expect(report.status).toBe("done");
		const decisions = sessions.decisions(report.childSessionId as string);
		expect(decisions.filter((decision) => decision.kind === "approval").map((decision) => decision.body)).toEqual([
			expect.objectContaining({ tool: "shell", verdict: "deny", mode: "plan" }),
		]);
		const messages = sessions.messages(report.childSessionId as string);
		expect(messages.some((entry) => entry.message.role === "tool" && entry.message.isError)).toBe(true);
	});

	it("an aborted child is failed, with its session id", async () => {
		fake = await startFakeProvider({ script: [{ delayMs: 10_000, then: { text: "late" } }] });
		const { spawn } = await setup();
		const controller = new AbortController();
		const running = spawn({ task: "t", role: role("explore"), maxRounds: 3 }, controller.signal);
		await new Promise<void>((resolve) => {
			const check = () => (fake.requests.length > 0 ? resolve() : setTimeout(check, 10));
			check();
		});
		controller.abort();
		const report = await running;
		expect(report).toMatchObject({ status: "failed", error: "aborted" });
		expect(report.childSessionId).toBeDefined();
	});
});
