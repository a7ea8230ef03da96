import { homedir } from "node:os";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Permission } from "../tools/tool.js";

// Permission modes: which tool calls run, which need a person's approval, which are refused. Pure: the answer
// depends only on the arguments (paths are resolved as text, the file system is never consulted).

/**
 * - plan: read and network tools only; writes only to *.md, *.txt and .snowpea/plans/**; no exec.
 * - accept (the default): exec, network and writes outside the working directory ask; the rest runs.
 * - auto: everything runs.
 */
export type PermissionMode = "plan" | "accept" | "auto";

export const PERMISSION_MODES: readonly PermissionMode[] = ["plan", "accept", "auto"];

export const DEFAULT_PERMISSION_MODE: PermissionMode = "accept";

export type PermissionVerdict = "allow" | "ask" | "deny";

/** What the rules look at in a tool. */
export interface PermissionSubject {
	name: string;
	permission: Permission;
}

/** True for "plan", "accept" and "auto". */
export function isPermissionMode(value: unknown): value is PermissionMode {
	return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}

/**
 * The verdict for one call in `mode`. `rawArguments` is the call's JSON text; its `path` argument (resolved against
 * `cwd`, `~` as the home directory) decides where a write lands. Reads run in every mode, wherever they point.
 * A write whose path cannot be read from the arguments is treated as a write outside the working directory.
 * In plan mode a write to an allowed name outside the working directory asks, as it would in accept mode.
 * Never throws.
 */
export function permissionVerdict(
	mode: PermissionMode,
	tool: PermissionSubject,
	rawArguments: string,
	cwd: string,
): PermissionVerdict {
	if (mode === "auto") return "allow";
	switch (tool.permission) {
		case "read":
			return "allow";
		case "network":
			return mode === "plan" ? "allow" : "ask";
		case "exec":
			return mode === "plan" ? "deny" : "ask";
		case "write": {
			const target = writeTarget(rawArguments, cwd);
			const inside = target !== undefined && isInside(cwd, target);
			if (mode === "plan" && (target === undefined || !isPlanWritable(cwd, target))) return "deny";
			return inside ? "allow" : "ask";
		}
		default:
			return "ask";
	}
}

/**
 * Who would have approved a call: a person at the terminal, nobody (`snowpea run`), or nobody because the caller is a
 * child agent — its parent's session decides its mode, and a child cannot ask.
 */
export type ApprovalAudience = "person" | "headless" | "child";

/**
 * One line saying why a call was refused or needs approval in `mode`, and how to allow it — the text the model reads
 * when the call is not run, phrased for `audience`. Never throws.
 */
export function permissionExplanation(
	mode: PermissionMode,
	tool: PermissionSubject,
	rawArguments: string,
	cwd: string,
	options: { audience: ApprovalAudience },
): string {
	const verdict = permissionVerdict(mode, tool, rawArguments, cwd);
	const what = describeNeed(tool, rawArguments, cwd);
	const { audience } = options;
	if (verdict === "deny") {
		const allowed = "plan mode allows read and network tools, and writes only to *.md, *.txt and .snowpea/plans/**";
		const how =
			audience === "headless"
				? "run with --mode accept or --mode auto to allow it"
				: audience === "child"
					? "your delegating agent's session is in plan mode; say in your report what you would have done"
					: "switch with /mode accept (or /mode auto) to allow it";
		return `permission denied: ${what} is not allowed in plan mode (${allowed}); ${how}`;
	}
	if (audience === "headless") {
		return `permission denied: ${what} needs approval in ${mode} mode, and nobody can approve it in a headless run; rerun with --mode auto to allow it, or run snowpea interactively to approve each call`;
	}
	if (audience === "child") {
		return `permission denied: ${what} needs approval in ${mode} mode, and a child agent cannot ask for it; say in your report what you need run or changed, so the delegating agent can do it (or its user can switch to auto mode)`;
	}
	return `permission denied: the user did not approve ${what}`;
}

/** A short phrase naming what the call would do: "running a shell command", "writing ../x.ts". */
function describeNeed(tool: PermissionSubject, rawArguments: string, cwd: string): string {
	switch (tool.permission) {
		case "exec":
			return `${tool.name} (it runs commands)`;
		case "network":
			return `${tool.name} (it uses the network)`;
		case "write": {
			const target = writeTarget(rawArguments, cwd);
			if (target === undefined) return `${tool.name} (it writes files)`;
			const where = isInside(cwd, target) ? "" : " outside the working directory";
			return `${tool.name} to ${displayPath(cwd, target)}${where}`;
		}
		default:
			return tool.name;
	}
}

/**
 * A one-line summary of a call's arguments for a person (the approval prompt, the stored decision): the command of
 * a shell call, the path of a write, else the compact JSON, clipped to `max` characters. Never throws.
 */
export function summarizeArguments(tool: PermissionSubject, rawArguments: string, max = 160): string {
	const parsed = parseObject(rawArguments);
	let text: string;
	if (parsed && typeof parsed.command === "string") text = parsed.command;
	else if (parsed && typeof parsed.code === "string") text = parsed.code;
	else if (parsed && typeof parsed.path === "string" && tool.permission === "write") text = parsed.path;
	else text = rawArguments;
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The absolute path a write call names, or undefined when its arguments hold no string `path`. */
function writeTarget(rawArguments: string, cwd: string): string | undefined {
	const path = parseObject(rawArguments)?.path;
	if (typeof path !== "string" || path === "") return undefined;
	if (path === "~") return homedir();
	if (path.startsWith("~/")) return join(homedir(), path.slice(2));
	return resolve(cwd, path);
}

function isInside(cwd: string, absolute: string): boolean {
	const inside = relative(resolve(cwd), absolute);
	return inside === "" || !(inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside));
}

/** *.md, *.txt (any case) anywhere, or anything under <cwd>/.snowpea/plans/. */
function isPlanWritable(cwd: string, absolute: string): boolean {
	if (/\.(md|txt)$/i.test(basename(absolute))) return true;
	const plans = resolve(cwd, ".snowpea", "plans");
	const inside = relative(plans, absolute);
	return inside !== "" && !(inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside));
}

function displayPath(cwd: string, absolute: string): string {
	return isInside(cwd, absolute) ? relative(resolve(cwd), absolute) || "." : absolute;
}

function parseObject(rawArguments: string): Record<string, unknown> | undefined {
	try {
		const value: unknown = JSON.parse(rawArguments);
		return typeof value === "object" && value !== null && !Array.isArray(value)
			? (value as Record<string, unknown>)
			: undefined;
	} catch {
		return undefined;
	}
}
