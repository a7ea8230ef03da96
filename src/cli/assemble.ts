import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { ContextFiles, contextFileCaps } from "../agent/context-files.js";
import { ContextPipeline } from "../agent/context-pipeline.js";
import { systemPrompt } from "../agent/prompt.js";
import { RepeatGuard } from "../agent/repeat-guard.js";
import { priceSheetFor } from "../context/cost.js";
import { type ModelInfo, modelInfo, parseModelId } from "../llm/models.js";
import { createProvider } from "../llm/registry.js";
import type { Provider, SystemSegment, ToolCall } from "../llm/types.js";
import { loadSessionState, type SessionState } from "../session/runner.js";
import type { SessionInfo, SessionStore } from "../session/store.js";
import { createBrowserTools } from "../tools/browser/browser-tools.js";
import { builtinTools } from "../tools/builtin.js";
import { loadMcpConfig } from "../tools/mcp/config.js";
import { McpManager } from "../tools/mcp/manager.js";
import { createSkillViewTool, discoverSkills, type Skill, skillDirectories, skillIndex } from "../tools/skills.js";
import type { ToolResult } from "../tools/tool.js";
import { createToolSearch } from "../tools/tool-search.js";
import { Toolset } from "../tools/toolset.js";
import { contextSettingsFor } from "./context-settings.js";
import type { Settings } from "./settings.js";
import { UsageError } from "./usage-error.js";

/** Everything one session's turns run with; built once per process and shared by its turns. */
export interface AssembledSession {
	session: SessionInfo;
	state: SessionState;
	modelId: string;
	model: ModelInfo;
	provider: Provider;
	toolset: Toolset;
	context: ContextPipeline;
	guard: RepeatGuard;
	/** The system prompt as it stands at assembly. */
	system: SystemSegment[];
	/** The system prompt each round: the same array until an instruction file changes. */
	systemNow: () => SystemSegment[];
	toolContext: { cwd: string; home: string; sessionId: string; spillDir: string };
	/** Adds what a tool call should carry along (a nested AGENTS.md it touched) and notices instruction-file writes. */
	annotateResult: (call: ToolCall, result: ToolResult) => ToolResult;
	contextFiles: ContextFiles;
	/** One line each, for the person: settings values that were ignored, servers that did not start. */
	warnings: string[];
	/** Ends the session's MCP servers and browser. Never rejects. */
	close(): Promise<void>;
}

/** The provider for a model id, or a usage error naming what is wrong. */
export function providerFor(modelId: string, settings: Settings): Provider {
	const provider = createProvider(modelId, {
		openai: settings.providers.openai,
		anthropic: settings.providers.anthropic,
		maxOutputTokens: settings.agent.maxOutputTokens,
	});
	if ("error" in provider) throw new UsageError(provider.error);
	return provider;
}

/** The model table row for a model id, with settings overrides. */
export function modelFor(modelId: string, settings: Settings): ModelInfo {
	const parsed = parseModelId(modelId);
	return modelInfo(parsed?.provider ?? "openai", parsed?.model ?? modelId, settings.models);
}

/**
 * Assembles a stored session for running turns: its provider, tools (built-in, browser, MCP servers, skills, with
 * the session's loaded deferred tools), the context engine with the stored ledger, the repeat guard and the
 * byte-stable system prompt (recomputed only when an instruction file changes).
 */
export async function assembleSession(input: {
	store: SessionStore;
	session: SessionInfo;
	settings: Settings;
	modelId: string;
	cwd: string;
	home: string;
	date?: string;
}): Promise<AssembledSession> {
	const { store, session, settings, modelId, cwd, home } = input;
	const provider = providerFor(modelId, settings);
	const model = modelFor(modelId, settings);
	const state = loadSessionState(store, session.id);
	const sessionDirectory = join(home, "sessions", session.id);
	const attachmentDirectory = () => join(sessionDirectory, "attachments");
	const tools = await createSessionTools({
		settings,
		cwd,
		home,
		modelId,
		model,
		attachmentDirectory,
		loaded: state.loadedTools,
	});
	const { toolset, skills, warnings } = tools;
	const engine = contextSettingsFor({ settings, model, home, cwd, sessionId: session.id });
	const lastRequest = store.events(session.id, { types: ["context"] }).at(-1);
	const context = new ContextPipeline(
		engine.settings,
		state.ledger,
		priceSheetFor(model),
		undefined,
		lastRequest ? lastRequest.createdAt / 1000 : undefined,
	);
	context.restore(state.entries);
	const contextFiles = new ContextFiles({
		cwd,
		caps: contextFileCaps(context.settings.contextWindow || undefined, {
			perFile: settings.agent.contextFileMaxChars,
			total: settings.agent.contextFilesMaxChars,
		}),
		ignore: settings.agent.ignoreContextFiles,
	});
	const date = input.date ?? new Date().toISOString().slice(0, 10);
	const skillsText = skills.length > 0 ? skillIndex(skills) : undefined;
	let rendered: { block: string; system: SystemSegment[] } | undefined;
	const system = () => {
		const block = contextFiles.block();
		if (rendered?.block !== block) {
			rendered = {
				block,
				system: systemPrompt({
					cwd,
					date,
					platform: process.platform,
					projectInstructions: block,
					skillsIndex: skillsText,
					deferredLine: toolset.deferredLine(),
				}),
			};
		}
		return rendered.system;
	};
	const annotateResult = (call: ToolCall, result: ToolResult): ToolResult => {
		const paths = touchedPaths(call);
		if (paths.length === 0) return result;
		if (result.ok && (call.name === "write_file" || call.name === "edit_file")) {
			if (paths.some((path) => contextFiles.isInstructionFile(path))) contextFiles.invalidate();
		}
		const attached = contextFiles.onToolTouched(paths, result.ok);
		return attached ? { ...result, content: `${result.content}\n\n${attached}` } : result;
	};
	return {
		session,
		state,
		modelId,
		model,
		provider,
		toolset,
		context,
		guard: new RepeatGuard({ enabled: settings.tools.repeatGuard, cwd }),
		system: system(),
		systemNow: system,
		toolContext: { cwd, home, sessionId: session.id, spillDir: join(sessionDirectory, "spill") },
		annotateResult,
		contextFiles,
		warnings: [...engine.warnings, ...warnings],
		close: tools.close,
	};
}

/**
 * Every tool a session has: built-in, skill_view (when skills exist), tool_search, the browser group and the MCP
 * servers' tools (their servers are started to list them). `close()` ends the browser and the servers.
 */
export async function createSessionTools(input: {
	settings: Settings;
	cwd: string;
	home: string;
	modelId: string;
	model: ModelInfo;
	attachmentDirectory: () => string;
	loaded?: readonly string[];
}): Promise<{ toolset: Toolset; skills: Skill[]; warnings: string[]; close(): Promise<void> }> {
	const { settings, cwd, home, modelId, model, attachmentDirectory } = input;
	const vision = () => model.vision;
	const browser = createBrowserTools({ executablePath: settings.browser.executablePath, attachmentDirectory, vision });
	const mcp = McpManager.fromConfig(loadMcpConfig({ settingsServers: settings.mcp.servers, projectDirectory: cwd }), {
		cwd,
		attachmentDirectory,
		vision,
	});
	const mcpTools = await mcp.tools();
	const skills = discoverSkills(skillDirectories(home, gitRoot(cwd) ?? cwd));
	const toolset: Toolset = new Toolset(
		[
			...builtinTools({ vision, attachmentDirectory, model: () => modelId }),
			...(skills.length > 0 ? [createSkillViewTool(skills)] : []),
			createToolSearch(() => toolset),
			...browser.tools,
			...mcpTools,
		],
		{ deferred: settings.tools.deferred, eager: settings.tools.eager },
		input.loaded ?? [],
	);
	return {
		toolset,
		skills,
		warnings: [...mcp.warnings],
		async close() {
			await Promise.allSettled([browser.close(), mcp.close()]);
		},
	};
}

/** The files and directories a call names: its `path` argument (read, write, edit, list, grep, glob) or shell `cwd`. */
function touchedPaths(call: ToolCall): string[] {
	try {
		const args = JSON.parse(call.arguments) as Record<string, unknown>;
		return [args.path, args.cwd].filter((value): value is string => typeof value === "string" && value !== "");
	} catch {
		return [];
	}
}

/** The git root above `cwd`, if any. */
function gitRoot(cwd: string): string | undefined {
	for (let directory = cwd; ; directory = dirname(directory)) {
		if (existsSync(join(directory, ".git"))) return directory;
		if (dirname(directory) === directory) return undefined;
	}
}
