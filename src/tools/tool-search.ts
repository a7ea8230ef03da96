import { z } from "zod";
import { defineTool, failure, type Tool } from "./tool.js";
import type { Toolset } from "./toolset.js";

const MAX_MATCHES = 5;

/** Scores a tool against keyword terms: +3 for a term in the name, +1 in name or description, +1 if a word starts with it. */
function score(tool: Tool, terms: string[]): number {
	const name = tool.name.toLowerCase();
	const text = `${name} ${tool.description.toLowerCase()}`;
	const words = text.split(/[^a-z0-9]+/);
	return terms.reduce(
		(total, term) =>
			total +
			(name.includes(term) ? 3 : 0) +
			(text.includes(term) ? 1 : 0) +
			(words.some((word) => word.startsWith(term)) ? 1 : 0),
		0,
	);
}

/** The tools a query names: "select:a,b" exactly (in that order), else keyword search with "+term" required. */
export function searchTools(query: string, candidates: readonly Tool[]): Tool[] {
	const trimmed = query.trim();
	if (trimmed.startsWith("select:")) {
		const names = trimmed
			.slice("select:".length)
			.split(",")
			.map((name) => name.trim());
		return names.flatMap((name) => candidates.filter((tool) => tool.name === name));
	}
	const tokens = trimmed.toLowerCase().split(/\s+/).filter(Boolean);
	const required = tokens.filter((token) => token.startsWith("+") && token.length > 1).map((token) => token.slice(1));
	const terms = tokens.map((token) => token.replace(/^\+/, "")).filter(Boolean);
	return candidates
		.filter((tool) => required.every((term) => `${tool.name} ${tool.description}`.toLowerCase().includes(term)))
		.map((tool, order) => ({ tool, order, points: score(tool, terms) }))
		.filter((entry) => entry.points > 0)
		.sort((a, b) => b.points - a.points || a.order - b.order)
		.slice(0, MAX_MATCHES)
		.map((entry) => entry.tool);
}

function sortedJson(value: unknown): string {
	return JSON.stringify(value, (_key, item: unknown) =>
		item && typeof item === "object" && !Array.isArray(item)
			? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
			: item,
	);
}

/**
 * `tool_search(query)`: loads deferred tools for the rest of the session. Loaded tools join the tool list from the
 * next round on (after every tool already sent); the result also shows their schemas so the model can call them now.
 */
export function createToolSearch(toolset: () => Toolset): Tool {
	return defineTool({
		name: "tool_search",
		description:
			'Load tools that are not in your tool list yet (the deferred groups named in the system prompt). query: "select:name1,name2" for exact tools, or a few keywords ("+term" = required). Returns at most 5 tools; they stay loaded for the session.',
		parameters: z.object({ query: z.string().describe('"select:a,b" or keywords') }),
		permission: "read",
		readOnly: true,
		async run({ query }) {
			if (query.trim() === "") return failure("invalid_arguments", "tool_search needs a query");
			const set = toolset();
			const matches = searchTools(query, set.all);
			if (matches.length === 0) {
				return {
					ok: true,
					content: `No tool matched '${query}'. Every tool you already have is in your tool list; the deferred groups are named in the system prompt.`,
				};
			}
			const loaded = matches.filter((tool) => set.load(tool.name)).map((tool) => tool.name);
			const lines = matches.map(
				(tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${sortedJson(tool.definition.parameters)}`,
			);
			return {
				ok: true,
				content: `Loaded ${matches.length} tool(s) for this session. They are in your tool list from the next round on, and you can call them now.\n${lines.join("\n")}`,
				display: `loaded ${matches.map((tool) => tool.name).join(", ")}`,
				details: { loaded },
			};
		},
	});
}
