import type { ToolDefinition } from "../llm/types.js";
import type { Tool } from "./tool.js";

/** Tools sent in full every round when they exist (seed 000's eager set). */
export const CORE_TOOL_NAMES: readonly string[] = [
	"read_file",
	"view_image",
	"write_file",
	"edit_file",
	"shell",
	"execute_code",
	"grep",
	"glob",
	"list_dir",
	"ask_user",
	"delegate_task",
	"skill_view",
	"tool_search",
];

/** The eager set of a read-only child agent. */
export const READ_ONLY_CHILD_TOOL_NAMES: readonly string[] = [
	"read_file",
	"view_image",
	"grep",
	"glob",
	"list_dir",
	"tool_search",
];

export interface ToolsetOptions {
	/** `tools.deferred` (default true): false sends every tool every round. */
	deferred: boolean;
	/** `tools.eager`: names always sent. */
	eager: readonly string[];
	/** Restricts the eager core set (a read-only child); undefined = CORE_TOOL_NAMES. */
	coreNames?: readonly string[];
}

/**
 * The tools of one session: which are sent each round and which wait behind tool_search.
 * Contract: the sent list only ever grows at its end — a tool loaded mid-session goes after every tool already sent,
 * so the provider's cached prefix up to the old list stays valid; nothing is ever reordered or removed.
 */
export class Toolset {
	private readonly byName: Map<string, Tool>;
	private readonly loadedNames: string[] = [];
	private definitionsCache: { count: number; definitions: ToolDefinition[] } | undefined;

	constructor(
		readonly all: readonly Tool[],
		private readonly options: ToolsetOptions,
		loaded: readonly string[] = [],
	) {
		this.byName = new Map(all.map((tool) => [tool.name, tool]));
		for (const name of loaded) this.load(name);
	}

	get(name: string): Tool | undefined {
		return this.byName.get(name);
	}

	/** True when the tool's schema is not sent until it is loaded. */
	isDeferred(tool: Tool): boolean {
		if (!this.options.deferred) return false;
		if (this.options.eager.includes(tool.name)) return false;
		return !(this.options.coreNames ?? CORE_TOOL_NAMES).includes(tool.name);
	}

	/** Tools loaded this session, in load order. */
	get loaded(): readonly string[] {
		return this.loadedNames;
	}

	/** Loads a deferred tool for the rest of the session; returns false when it was already sent or is unknown. */
	load(name: string): boolean {
		const tool = this.byName.get(name);
		if (!tool || !this.isDeferred(tool) || this.loadedNames.includes(name)) return false;
		this.loadedNames.push(name);
		return true;
	}

	/** The tools sent this round: eager ones in registry order, then loaded ones in load order. */
	sent(): Tool[] {
		const eager = this.all.filter((tool) => !this.isDeferred(tool));
		const loaded = this.loadedNames.map((name) => this.byName.get(name) as Tool);
		return [...eager, ...loaded];
	}

	/** The definitions sent this round; the same array object while nothing was loaded (byte-stable by construction). */
	definitions(): ToolDefinition[] {
		const count = this.loadedNames.length;
		if (this.definitionsCache?.count !== count) {
			this.definitionsCache = { count, definitions: this.sent().map((tool) => tool.definition) };
		}
		return this.definitionsCache.definitions;
	}

	/** Deferred tools not loaded yet. */
	waiting(): Tool[] {
		return this.all.filter((tool) => this.isDeferred(tool) && !this.loadedNames.includes(tool.name));
	}

	/**
	 * One line naming the deferred groups with their sizes, e.g. "Deferred (load with tool_search): browser (8),
	 * mcp:github (12)"; undefined when nothing is deferred. Counts are whole groups, so loading a tool never changes
	 * this line (and the system prompt it sits in).
	 */
	deferredLine(): string | undefined {
		const groups = new Map<string, number>();
		for (const tool of this.all) {
			if (!this.isDeferred(tool)) continue;
			const group = tool.group ?? tool.name.split("_")[0] ?? tool.name;
			groups.set(group, (groups.get(group) ?? 0) + 1);
		}
		if (groups.size === 0) return undefined;
		const parts = [...groups.entries()]
			.sort(([a], [b]) => a.localeCompare(b))
			.map(([group, count]) => `${group} (${count})`);
		return `Deferred (load with tool_search): ${parts.join(", ")}`;
	}
}
