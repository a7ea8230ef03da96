import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createSessionTools, modelFor } from "./assemble.js";
import type { Output } from "./render.js";
import { loadOrExplain } from "./run-command.js";
import { snowpeaHome } from "./settings.js";

/** One row of `snowpea tools list --json`. */
export interface ToolRow {
	name: string;
	permission: string;
	description: string;
	/** True when the schema is sent only after tool_search (or a direct call) loads it. */
	deferred: boolean;
	/** "builtin", "mcp:<server>", … */
	source: string;
}

/** `snowpea tools list [--json]`: every tool a session in `cwd` would have, with its permission and deferral. */
export async function listTools(flags: { json?: boolean; cwd?: string }, output: Output): Promise<void> {
	const cwd = resolve(flags.cwd ?? process.cwd());
	const { settings, warnings } = loadOrExplain(cwd);
	for (const warning of warnings) output.log(`warning: ${warning}\n`);
	const tools = await createSessionTools({
		settings,
		cwd,
		home: snowpeaHome(),
		modelId: settings.model,
		model: modelFor(settings.model, settings),
		attachmentDirectory: () => join(tmpdir(), "snowpea-attachments"),
	});
	try {
		for (const warning of tools.warnings) output.log(`warning: ${warning}\n`);
		const rows: ToolRow[] = tools.toolset.all.map((tool) => ({
			name: tool.name,
			permission: tool.permission,
			description: tool.description.split("\n")[0] ?? "",
			deferred: tools.toolset.isDeferred(tool),
			source: tool.source,
		}));
		if (flags.json) return output.out(`${JSON.stringify(rows, null, 2)}\n`);
		const width = Math.max(...rows.map((row) => row.name.length));
		for (const row of rows) {
			const summary = row.description.length > 90 ? `${row.description.slice(0, 89)}…` : row.description;
			output.out(
				`${row.name.padEnd(width)}  ${row.permission.padEnd(7)}  ${row.deferred ? "deferred" : "eager   "}  ${row.source.padEnd(9)}  ${summary}\n`,
			);
		}
		const line = tools.toolset.deferredLine();
		if (line && !flags.json) output.out(`\n${line}\n`);
	} finally {
		await tools.close();
	}
}
