import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { ContextFiles, contextFileCaps } from "../agent/context-files.js";
import { ContextPipeline } from "../agent/context-pipeline.js";
import { createDelegateTool, type SpawnChild } from "../agent/delegate.js";
import type { TurnOptions } from "../agent/loop.js";
import type { PermissionMode } from "../agent/permissions.js";
import { systemPrompt } from "../agent/prompt.js";
import { RepeatGuard } from "../agent/repeat-guard.js";
import { CHILD_PREAMBLE, loadAgentDefinitions, mergeRoles, type RoleDefinition } from "../agent/roles.js";
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
import type { Tool, ToolResult } from "../tools/tool.js";
import { createToolSearch } from "../tools/tool-search.js";
import { READ_ONLY_CHILD_TOOL_NAMES, Toolset } from "../tools/toolset.js";
import { createChildSpawner } from "./children.js";
import { contextSettingsFor } from "./context-settings.js";
import type { Settings } from "./settings.js";
import { UsageError } from "./usage-error.js";

/** How a child agent's session is assembled (see assembleSession). */
export interface ChildAssembly {
	role: RoleDefinition;
	/** `agents.childContext` is "lean": no skills index, nested instruction files only attached on touch. */
	lean: boolean;
	/** The call's `tools`: narrows the child's tools to these names (within what the role allows). */
	tools?: string[];
}

/** What assembleSession needs. */
export interface AssembleInput {
	store: SessionStore;
	session: SessionInfo;
	settings: Settings;
	modelId: string;
	cwd: string;
	home: string;
	/** YYYY-MM-DD for the prompt (default today); children get their parent's, so their prompts stay identical. */
	date?: string;
	/** Present when the session is a delegated child: then it gets no delegate_task. */
	child?: ChildAssembly;
	/**
	 * The permission mode the session's children apply to their own calls (read at each call). Absent: "plan", so a
	 * child can never do more than a parent in the strictest mode unless the command says which mode it runs in.
	 */
	permissionMode?: () => PermissionMode;
	/**
	 * A child's MCP tools: its parent's, already connected (a child never starts servers of its own, and does not
	 * close them). Absent: the session starts the configured servers itself.
	 */
	mcpTools?: readonly Tool[];
}

/** Tools a child never gets: it cannot delegate further, and no person answers it. */
const NOT_FOR_CHILDREN: ReadonlySet<string> = new Set(["delegate_task", "ask_user"]);

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
	/** The parts of a turn's options that come from the session: provider, tools, engine, guard, prompt, images. */
	turnOptions(): SessionTurnParts;
}

/** What `runSessionTurn` takes from an assembled session (the caller adds input, signal, approval, round budget). */
export type SessionTurnParts = Pick<
	TurnOptions,
	| "provider"
	| "toolset"
	| "context"
	| "guard"
	| "system"
	| "vision"
	| "maxImagesPerRequest"
	| "annotateResult"
	| "toolContext"
>;

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
 *
 * A top-level session gets delegate_task, whose children are stored as its child sessions and assembled here with
 * `child`. A child's system prompt adds its role text (CHILD_PREAMBLE, then the role's prompt) to the stable tier and
 * nothing per child, so children of one role share one byte-identical prefix of system prompt and tools. Lean
 * (`agents.childContext` "lean"): no skills index, nested instruction files listed and attached on touch, and a
 * read-only role sends only READ_ONLY_CHILD_TOOL_NAMES eagerly. "full": the parent's prompt context. A read-only role
 * never has a tool that is not read-only; a `tools` list (the role's, the call's, or both intersected) leaves exactly
 * those tools, all sent eagerly.
 */
export async function assembleSession(input: AssembleInput): Promise<AssembledSession> {
	const { store, session, settings, modelId, cwd, home, child } = input;
	const provider = providerFor(modelId, settings);
	const model = modelFor(modelId, settings);
	const state = loadSessionState(store, session.id);
	const sessionDirectory = join(home, "sessions", session.id);
	const attachmentDirectory = () => join(sessionDirectory, "attachments");
	const date = input.date ?? new Date().toISOString().slice(0, 10);
	let parentMcp: readonly Tool[] = [];
	const spawn = child
		? undefined
		: createChildSpawner({
				store,
				parent: session,
				settings,
				modelId,
				cwd,
				home,
				date,
				permissionMode: input.permissionMode ?? (() => "plan"),
				assemble: assembleSession,
				mcpTools: () => parentMcp,
			});
	const tools = await createSessionTools({
		settings,
		cwd,
		home,
		modelId,
		model,
		attachmentDirectory,
		loaded: state.loadedTools,
		...(child ? { child: { readOnly: child.role.readOnly, lean: child.lean, tools: childToolNames(child) } } : {}),
		...(spawn ? { spawn } : {}),
		...(input.mcpTools ? { mcpTools: input.mcpTools } : {}),
	});
	parentMcp = tools.mcpTools;
	const { toolset, skills } = tools;
	const outsideRole = child?.tools?.filter((name) => child.role.tools && !child.role.tools.includes(name)) ?? [];
	const warnings = [
		...(outsideRole.length > 0 ? [`tools not available to this child: ${outsideRole.join(", ")}`] : []),
		...tools.warnings,
	];
	const engine = contextSettingsFor({ settings, model, home, cwd, sessionId: session.id });
	const lastRequest = store.latestEvent(session.id, "context");
	const context = new ContextPipeline(
		engine.settings,
		state.ledger,
		priceSheetFor(model),
		undefined,
		lastRequest ? lastRequest.createdAt / 1000 : undefined,
	);
	context.restore(state.entries);
	// A resumed session's token estimates start calibrated by its last response, not at 1:1.
	const lastUsage = store.latestEvent(session.id, "usage")?.event;
	const lastReport = lastRequest?.event;
	if (lastUsage?.type === "usage" && lastReport?.type === "context" && lastReport.report.round === lastUsage.round) {
		context.calibrate(lastReport.report.total.tokens, lastUsage.usage);
	}
	const contextFiles = new ContextFiles({
		cwd,
		caps: contextFileCaps(context.settings.contextWindow || undefined, {
			perFile: settings.agent.contextFileMaxChars,
			total: settings.agent.contextFilesMaxChars,
		}),
		ignore: settings.agent.ignoreContextFiles,
		lean: child?.lean ?? false,
	});
	const skillsText = skills.length > 0 && !child?.lean ? skillIndex(skills) : undefined;
	const role = child ? `${CHILD_PREAMBLE}\n\n${child.role.prompt}` : undefined;
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
					...(role ? { role } : {}),
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
	const guard = new RepeatGuard({ enabled: settings.tools.repeatGuard, cwd });
	// A resumed session remembers what it read: an unchanged re-read is stubbed as it would have been before.
	const savedGuard = store.latestEvent(session.id, "guard.state")?.event;
	if (savedGuard?.type === "guard.state") guard.restore(savedGuard.state);
	const toolContext = {
		cwd,
		home,
		sessionId: session.id,
		spillDir: join(sessionDirectory, "spill"),
		attachmentDir: attachmentDirectory(),
	};
	return {
		session,
		state,
		modelId,
		model,
		provider,
		toolset,
		context,
		guard,
		system: system(),
		systemNow: system,
		toolContext,
		annotateResult,
		contextFiles,
		// A child's warnings go to its parent's model: the settings warnings were already shown with the parent's.
		warnings: child ? warnings : [...engine.warnings, ...warnings],
		close: tools.close,
		turnOptions: () => ({
			provider,
			toolset,
			context,
			guard,
			system,
			vision: model.vision,
			maxImagesPerRequest: settings.agent.maxImagesPerRequest,
			annotateResult,
			toolContext,
		}),
	};
}

/**
 * Every tool a session has: built-in, delegate_task (not for a child), skill_view (when skills exist), tool_search,
 * the browser group and the MCP servers' tools (their servers are started to list them, unless `mcpTools` hands over
 * a parent's, which this session then neither starts nor closes). `close()` ends the browser and the servers.
 * delegate_task's agents are the built-in roles and `.snowpea/agents/*.md` (bad files are warnings); without `spawn`
 * its calls fail with "delegation is not available here". A `child` loses delegate_task and ask_user,
 * keeps only read-only tools when `readOnly`, and only the named tools when `tools` is given (see assembleSession).
 */
export async function createSessionTools(input: {
	settings: Settings;
	cwd: string;
	home: string;
	modelId: string;
	model: ModelInfo;
	attachmentDirectory: () => string;
	loaded?: readonly string[];
	/** The child's restrictions, for a delegated child's session. */
	child?: { readOnly: boolean; lean: boolean; tools?: readonly string[] };
	/** Runs delegate_task's children (a top-level session). */
	spawn?: SpawnChild;
	/** MCP tools already connected by a parent session (see AssembleInput.mcpTools). */
	mcpTools?: readonly Tool[];
}): Promise<{
	toolset: Toolset;
	skills: Skill[];
	warnings: string[];
	/** The MCP servers' tools this session has (its own, or the parent's it was given). */
	mcpTools: readonly Tool[];
	close(): Promise<void>;
}> {
	const { settings, cwd, home, modelId, model, attachmentDirectory, child } = input;
	const vision = () => model.vision;
	const browser = createBrowserTools({ executablePath: settings.browser.executablePath, attachmentDirectory, vision });
	const mcp = input.mcpTools
		? undefined
		: McpManager.fromConfig(loadMcpConfig({ settingsServers: settings.mcp.servers, projectDirectory: cwd }), {
				cwd,
				attachmentDirectory,
				vision,
			});
	const mcpTools = mcp ? await mcp.tools() : (input.mcpTools ?? []);
	const skills = discoverSkills(skillDirectories(home, gitRoot(cwd) ?? cwd));
	const warnings = [...(mcp?.warnings ?? [])];
	let delegate: Tool[] = [];
	if (!child) {
		const agents = loadAgentDefinitions(cwd);
		warnings.push(...agents.warnings);
		const roles = mergeRoles(agents.definitions);
		delegate = [
			createDelegateTool(input.spawn ?? unavailableSpawn, {
				maxConcurrent: settings.agents.maxConcurrent,
				roles: () => roles,
			}),
		];
	}
	let all: Tool[] = [
		...builtinTools({ vision, attachmentDirectory, model: () => modelId }),
		...delegate,
		...(skills.length > 0 ? [createSkillViewTool(skills)] : []),
		createToolSearch(() => toolset),
		...browser.tools,
		...mcpTools,
	];
	let coreNames: readonly string[] | undefined;
	if (child) {
		all = all.filter((tool) => !NOT_FOR_CHILDREN.has(tool.name) && (!child.readOnly || tool.readOnly));
		if (child.tools) {
			const names = child.tools;
			const missing = names.filter((name) => !all.some((tool) => tool.name === name));
			if (missing.length > 0) warnings.push(`tools not available to this child: ${missing.join(", ")}`);
			all = all.filter((tool) => names.includes(tool.name));
			coreNames = names;
		} else if (child.readOnly && child.lean) coreNames = READ_ONLY_CHILD_TOOL_NAMES;
	}
	const toolset: Toolset = new Toolset(
		all,
		{ deferred: settings.tools.deferred, eager: settings.tools.eager, ...(coreNames ? { coreNames } : {}) },
		input.loaded ?? [],
	);
	return {
		toolset,
		skills,
		warnings,
		mcpTools,
		async close() {
			await Promise.allSettled([browser.close(), mcp?.close()]);
		},
	};
}

/** The tool names a child is limited to: the role's list, the call's, both intersected, or undefined (no list). */
function childToolNames(child: ChildAssembly): string[] | undefined {
	const { tools: role } = child.role;
	const { tools: call } = child;
	if (role && call) return call.filter((name) => role.includes(name));
	return call ?? role;
}

/** delegate_task's spawn where no session can hold children (e.g. `snowpea tools list`). */
const unavailableSpawn: SpawnChild = async () => ({
	status: "failed",
	report: "",
	rounds: 0,
	usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 },
	error: "delegation is not available here",
});

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
