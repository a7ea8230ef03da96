import { askUserTool } from "./ask-user.js";
import { editFileTool } from "./edit-file.js";
import { executeCodeTool } from "./execute-code.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { shellTool } from "./shell.js";
import type { Tool } from "./tool.js";
import { writeFileTool } from "./write-file.js";

/** The core tools, always in this order (the order is part of the cached prompt prefix). */
export function builtinTools(): Tool[] {
	return [
		readFileTool,
		writeFileTool,
		editFileTool,
		shellTool,
		executeCodeTool,
		grepTool,
		globTool,
		listDirTool,
		askUserTool,
	];
}
