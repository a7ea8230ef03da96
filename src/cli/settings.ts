import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { AUTO_SPEND, CONTEXT_POLICIES } from "../context/settings.js";

const ProviderSettings = z.object({ apiKey: z.string().optional(), baseURL: z.string().url().optional() });

const ModelOverride = z.object({
	contextWindow: z.number().int().positive().optional(),
	maxOutput: z.number().int().positive().optional(),
	vision: z.boolean().optional(),
	minCacheTokens: z.number().int().nonnegative().optional(),
	cacheTtlSeconds: z.number().int().positive().optional(),
	prices: z
		.object({
			input: z.number().nonnegative().optional(),
			output: z.number().nonnegative().optional(),
			cacheReadMultiplier: z.number().nonnegative().optional(),
			cacheWriteMultiplier: z.number().nonnegative().optional(),
		})
		.optional(),
});

/** Every setting snowpea knows, with its default. Files may set any subset. */
export const SettingsSchema = z.object({
	model: z.string().default("openai:gpt-4o"),
	models: z.record(z.string(), ModelOverride).default({}),
	providers: z.object({ openai: ProviderSettings.optional(), anthropic: ProviderSettings.optional() }).default({}),
	agent: z
		.object({
			maxToolRounds: z.number().int().positive().default(500),
			maxOutputTokens: z.number().int().positive().optional(),
			pruneToolOutputs: z.boolean().optional(),
			keepToolRounds: z.number().int().nonnegative().optional(),
			contextFileMaxChars: z.number().int().positive().optional(),
			contextFilesMaxChars: z.number().int().positive().optional(),
			ignoreContextFiles: z.boolean().default(false),
			maxImagesPerRequest: z.number().int().nonnegative().default(20),
		})
		.default({ maxToolRounds: 500, ignoreContextFiles: false, maxImagesPerRequest: 20 }),
	agents: z
		.object({
			childContext: z.enum(["lean", "full"]).default("lean"),
			maxConcurrent: z.number().int().positive().default(3),
		})
		.default({ childContext: "lean", maxConcurrent: 3 }),
	skills: z
		.object({ protectRecentViews: z.number().int().nonnegative().default(2) })
		.default({ protectRecentViews: 2 }),
	browser: z.object({ executablePath: z.string().optional() }).default({}),
	mcp: z.object({ servers: z.record(z.string(), z.unknown()).default({}) }).default({ servers: {} }),
	context: z
		.object({
			policy: z.enum(CONTEXT_POLICIES).optional(),
			toolResultMaxBytes: z.number().int().nonnegative().optional(),
			historyBudgetBytes: z.number().int().nonnegative().optional(),
			historyBudgetLowBytes: z.number().int().nonnegative().optional(),
			keepRecentResults: z.number().int().nonnegative().optional(),
			elisionSpillDir: z.string().optional(),
			contextWindow: z.number().int().positive().optional(),
			toolResultSnipRatio: z.number().gt(0).lte(1).optional(),
			compactRatio: z.number().gt(0).lte(1).optional(),
			exemptTools: z.array(z.string()).optional(),
			autoKeepToolRounds: z.number().int().nonnegative().optional(),
			elideArgumentChars: z.number().int().nonnegative().optional(),
			autoSpend: z.enum(AUTO_SPEND).optional(),
		})
		.default({}),
	tools: z
		.object({
			repeatGuard: z.boolean().default(true),
			deferred: z.boolean().default(true),
			eager: z.array(z.string()).default([]),
		})
		.default({ repeatGuard: true, deferred: true, eager: [] }),
	log: z.object({ detailedPath: z.string().optional() }).default({}),
});

export type Settings = z.infer<typeof SettingsSchema>;

/** A settings file that could not be used; `message` is one line naming the file and key. */
export class SettingsError extends Error {}

export interface LoadedSettings {
	settings: Settings;
	/** One line each: unknown keys and other things worth saying that do not stop the run. */
	warnings: string[];
	/** The files that were read, user first. */
	files: string[];
}

/** $SNOWPEA_HOME, else ~/.snowpea. */
export function snowpeaHome(environment: NodeJS.ProcessEnv = process.env): string {
	return resolve(environment.SNOWPEA_HOME || join(homedir(), ".snowpea"));
}

/**
 * Reads `$SNOWPEA_HOME/settings.json` then `<cwd>/.snowpea/settings.json` (the project wins, key by key), applies
 * documented environment variables, validates. Unknown keys are warnings; a bad value throws SettingsError naming
 * the file and the key.
 */
export function loadSettings(cwd: string, environment: NodeJS.ProcessEnv = process.env): LoadedSettings {
	const warnings: string[] = [];
	const files: string[] = [];
	let merged: Record<string, unknown> = {};
	for (const file of [join(snowpeaHome(environment), "settings.json"), join(cwd, ".snowpea", "settings.json")]) {
		if (!existsSync(file)) continue;
		const data = readJson(file);
		files.push(file);
		for (const key of unknownKeys(data, SettingsSchema)) warnings.push(`${file}: unknown setting "${key}" (ignored)`);
		const checked = SettingsSchema.safeParse(data);
		if (!checked.success) throw new SettingsError(describeIssue(file, checked.error));
		merged = deepMerge(merged, data);
	}
	applyEnvironment(merged, environment);
	const checked = SettingsSchema.safeParse(merged);
	if (!checked.success) throw new SettingsError(describeIssue("environment", checked.error));
	return { settings: checked.data, warnings, files };
}

function readJson(file: string): Record<string, unknown> {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch (error) {
		throw new SettingsError(`${file}: cannot read (${(error as Error).message})`);
	}
	let data: unknown;
	try {
		data = JSON.parse(text);
	} catch (error) {
		throw new SettingsError(`${file}: not valid JSON (${(error as Error).message}); fix the file or remove it`);
	}
	if (!isRecord(data)) throw new SettingsError(`${file}: must hold one JSON object`);
	return data;
}

// Environment variables that override settings keys.
function applyEnvironment(settings: Record<string, unknown>, environment: NodeJS.ProcessEnv): void {
	const set = (path: string[], value: unknown) => {
		let target = settings;
		for (const key of path.slice(0, -1)) {
			if (!isRecord(target[key])) target[key] = {};
			target = target[key] as Record<string, unknown>;
		}
		target[path.at(-1) as string] = value;
	};
	if (environment.SNOWPEA_MODEL) set(["model"], environment.SNOWPEA_MODEL);
	if (environment.DETAILED_LOG_PATH) set(["log", "detailedPath"], environment.DETAILED_LOG_PATH);
}

function describeIssue(source: string, error: z.ZodError): string {
	const issue = error.issues[0];
	const key = issue?.path.join(".") || "(top level)";
	return `${source}: setting "${key}" is invalid — ${issue?.message ?? "bad value"}`;
}

/** Dotted paths of keys in `data` that the schema does not define. */
function unknownKeys(data: unknown, schema: z.ZodType, prefix = ""): string[] {
	const shape = objectShape(schema);
	if (!shape || !isRecord(data)) return [];
	return Object.entries(data).flatMap(([key, value]) => {
		const path = prefix ? `${prefix}.${key}` : key;
		const child = shape[key];
		if (!child) return [path];
		return unknownKeys(value, child, path);
	});
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
	let current: z.ZodType = schema;
	while (current instanceof z.ZodDefault || current instanceof z.ZodOptional) {
		current = current.unwrap() as z.ZodType;
	}
	return current instanceof z.ZodObject ? (current.shape as Record<string, z.ZodType>) : undefined;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
	const result: Record<string, unknown> = { ...base };
	for (const [key, value] of Object.entries(over)) {
		const existing = result[key];
		result[key] = isRecord(existing) && isRecord(value) ? deepMerge(existing, value) : value;
	}
	return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
