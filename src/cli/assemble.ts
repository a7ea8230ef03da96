import { join } from "node:path";
import { ContextPipeline } from "../agent/context-pipeline.js";
import { systemPrompt } from "../agent/prompt.js";
import { RepeatGuard } from "../agent/repeat-guard.js";
import { priceSheetFor } from "../context/cost.js";
import { type ModelInfo, modelInfo, parseModelId } from "../llm/models.js";
import { createProvider } from "../llm/registry.js";
import type { Provider, SystemSegment } from "../llm/types.js";
import { loadSessionState, type SessionState } from "../session/runner.js";
import type { SessionInfo, SessionStore } from "../session/store.js";
import { builtinTools } from "../tools/builtin.js";
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
	system: SystemSegment[];
	toolContext: { cwd: string; home: string; sessionId: string; spillDir: string };
	/** One line each, for the person: settings values that were ignored. */
	warnings: string[];
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
 * Assembles a stored session for running turns: its provider, tools (with the session's loaded deferred tools), the
 * context engine with the stored ledger, the repeat guard and the byte-stable system prompt.
 */
export function assembleSession(input: {
	store: SessionStore;
	session: SessionInfo;
	settings: Settings;
	modelId: string;
	cwd: string;
	home: string;
	date?: string;
}): AssembledSession {
	const { store, session, settings, modelId, cwd, home } = input;
	const provider = providerFor(modelId, settings);
	const model = modelFor(modelId, settings);
	const state = loadSessionState(store, session.id);
	const sessionDirectory = join(home, "sessions", session.id);
	const toolset: Toolset = new Toolset(
		[
			...builtinTools({
				vision: () => model.vision,
				attachmentDirectory: () => join(sessionDirectory, "attachments"),
				model: () => modelId,
			}),
			createToolSearch(() => toolset),
		],
		{ deferred: settings.tools.deferred, eager: settings.tools.eager },
		state.loadedTools,
	);
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
	const system = systemPrompt({
		cwd,
		date: input.date ?? new Date().toISOString().slice(0, 10),
		platform: process.platform,
		deferredLine: toolset.deferredLine(),
	});
	return {
		session,
		state,
		modelId,
		model,
		provider,
		toolset,
		context,
		guard: new RepeatGuard({ enabled: settings.tools.repeatGuard, cwd }),
		system,
		toolContext: { cwd, home, sessionId: session.id, spillDir: join(sessionDirectory, "spill") },
		warnings: engine.warnings,
	};
}
