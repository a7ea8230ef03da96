import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolContext } from "../../src/tools/tool.js";

/** A fresh temp directory and a tool context working in it (spill dir and home inside it). */
export function toolTestContext(prefix = "snowpea-tool-"): { root: string; context: ToolContext } {
	const root = mkdtempSync(join(tmpdir(), prefix));
	const context: ToolContext = {
		cwd: root,
		home: join(root, "home"),
		sessionId: "s",
		callId: "c",
		signal: new AbortController().signal,
		spillDir: join(root, "spill"),
	};
	return { root, context };
}
