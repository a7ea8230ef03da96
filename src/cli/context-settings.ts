import { isAbsolute, join, resolve } from "node:path";
import { type ContextSettings, resolveContextSettings } from "../context/settings.js";
import type { ModelInfo } from "../llm/models.js";
import type { Settings } from "./settings.js";
import { UsageError } from "./usage-error.js";

/**
 * The context engine's settings for one session: defaults ← settings files ← CONTEXT_* environment variables.
 * The default policy is "auto". Without `context.policy`, seed 000's keys pick "rounds" (`agent.pruneToolOutputs:
 * true` or `agent.keepToolRounds`) or "off" (`agent.pruneToolOutputs: false`), and seed 003's budget variables pick
 * "budget"; the spill directory
 * defaults to `$SNOWPEA_HOME/sessions/<session id>/elided`. Contradictions are usage errors (exit 2).
 */
export function contextSettingsFor(input: {
	settings: Settings;
	model: ModelInfo;
	home: string;
	cwd: string;
	sessionId: string;
	environment?: NodeJS.ProcessEnv;
}): { settings: ContextSettings; warnings: string[] } {
	const { context, agent } = input.settings;
	const base: Partial<ContextSettings> = {
		spillDir: join(input.home, "sessions", input.sessionId, "elided"),
		contextWindow: context.contextWindow ?? input.model.contextWindow,
	};
	// A seed's own configuration gives that seed's behaviour: seed 000 writes agent.pruneToolOutputs/keepToolRounds.
	if (context.policy) base.policy = context.policy;
	else if (agent.pruneToolOutputs === false) base.policy = "off";
	else if (agent.pruneToolOutputs === true || agent.keepToolRounds !== undefined) base.policy = "rounds";
	if (agent.keepToolRounds !== undefined) base.keepToolRounds = agent.keepToolRounds;
	if (context.toolResultMaxBytes !== undefined) base.toolResultMaxBytes = context.toolResultMaxBytes;
	if (context.historyBudgetBytes !== undefined) base.historyBudgetBytes = context.historyBudgetBytes;
	if (context.historyBudgetLowBytes !== undefined) base.historyBudgetLowBytes = context.historyBudgetLowBytes;
	if (context.keepRecentResults !== undefined) base.keepRecentResults = context.keepRecentResults;
	if (context.toolResultSnipRatio !== undefined) base.toolResultSnipRatio = context.toolResultSnipRatio;
	if (context.compactRatio !== undefined) base.compactRatio = context.compactRatio;
	if (context.exemptTools !== undefined) base.exemptTools = context.exemptTools;
	if (context.autoKeepToolRounds !== undefined) base.autoKeepToolRounds = context.autoKeepToolRounds;
	if (context.elideArgumentChars !== undefined) base.elideArgumentChars = context.elideArgumentChars;
	if (context.autoSpend !== undefined) base.autoSpend = context.autoSpend;
	base.skillViewsKept = input.settings.skills.protectRecentViews;
	if (context.elisionSpillDir !== undefined) {
		const dir = context.elisionSpillDir;
		base.spillDir = dir === "off" ? "off" : isAbsolute(dir) ? dir : resolve(input.cwd, dir);
	}
	const resolved = resolveContextSettings({
		base,
		policyExplicit: context.policy !== undefined,
		environment: input.environment ?? process.env,
	});
	if (resolved.errors.length > 0) throw new UsageError(resolved.errors.join("; "));
	// A spill directory given through the environment is shared by sessions: scope it by session, as the default is.
	const fromEnvironment = (input.environment ?? process.env).CONTEXT_ELISION_SPILL_DIR?.trim();
	if (fromEnvironment && fromEnvironment !== "off" && resolved.settings.spillDir === fromEnvironment) {
		resolved.settings.spillDir = join(fromEnvironment, input.sessionId);
	}
	return { settings: resolved.settings, warnings: resolved.warnings };
}
