import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTEXT_POLICIES } from "../context/settings.js";
import { loadSettings, SettingsError } from "./settings.js";

function setup(user?: unknown, project?: unknown) {
	const home = mkdtempSync(join(tmpdir(), "snowpea-settings-home-"));
	const cwd = mkdtempSync(join(tmpdir(), "snowpea-settings-cwd-"));
	if (user !== undefined)
		writeFileSync(join(home, "settings.json"), typeof user === "string" ? user : JSON.stringify(user));
	if (project !== undefined) {
		mkdirSync(join(cwd, ".snowpea"));
		writeFileSync(join(cwd, ".snowpea", "settings.json"), JSON.stringify(project));
	}
	return { cwd, environment: { SNOWPEA_HOME: home } as NodeJS.ProcessEnv };
}

describe("settings", () => {
	it("gives defaults when no file exists", () => {
		const { cwd, environment } = setup();
		const { settings, warnings } = loadSettings(cwd, environment);
		expect(settings.agent.maxToolRounds).toBe(500);
		expect(warnings).toEqual([]);
	});

	it("lets the project win over the user, key by key", () => {
		const { cwd, environment } = setup(
			{ model: "anthropic:claude-sonnet-4-5", agent: { maxToolRounds: 40 } },
			{ agent: { maxToolRounds: 12 } },
		);
		const { settings } = loadSettings(cwd, environment);
		expect(settings.model).toBe("anthropic:claude-sonnet-4-5");
		expect(settings.agent.maxToolRounds).toBe(12);
	});

	it("warns about unknown keys and fails on bad values naming the key", () => {
		const { cwd, environment } = setup({ agent: { maxToolRounds: 10, colour: "red" }, nonsense: 1 });
		const { warnings } = loadSettings(cwd, environment);
		expect(warnings).toHaveLength(2);
		expect(warnings.join("\n")).toContain('unknown setting "agent.colour"');
		const bad = setup({ agent: { maxToolRounds: "many" } });
		expect(() => loadSettings(bad.cwd, bad.environment)).toThrow(SettingsError);
		expect(() => loadSettings(bad.cwd, bad.environment)).toThrow(/agent\.maxToolRounds/);
		const broken = setup("{ not json");
		expect(() => loadSettings(broken.cwd, broken.environment)).toThrow(/not valid JSON/);
	});

	it("accepts the README's example settings file as it is, every context policy included", () => {
		const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");
		const example = /Settings live in[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)?.[1];
		expect(example).toBeDefined();
		const { cwd, environment } = setup(example);
		const { settings, warnings } = loadSettings(cwd, environment);
		expect(warnings).toEqual([]);
		expect(settings.context.policy).toBe("auto");
		expect(settings.context.elideArgumentChars).toBe(500);
		for (const policy of CONTEXT_POLICIES) {
			const one = setup({ context: { policy } });
			expect(loadSettings(one.cwd, one.environment).settings.context.policy).toBe(policy);
		}
	});

	it("lets documented environment variables override their keys", () => {
		const { cwd, environment } = setup({ model: "openai:gpt-4o" });
		const { settings } = loadSettings(cwd, {
			...environment,
			SNOWPEA_MODEL: "openai:gpt-5",
			DETAILED_LOG_PATH: "/tmp/llm.jsonl",
		});
		expect(settings.model).toBe("openai:gpt-5");
		expect(settings.log.detailedPath).toBe("/tmp/llm.jsonl");
	});
});
