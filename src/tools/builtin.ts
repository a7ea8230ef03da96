import { tmpdir } from "node:os";
import { join } from "node:path";
import { askUserTool } from "./ask-user.js";
import { editFileTool } from "./edit-file.js";
import { executeCodeTool } from "./execute-code.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { readFileTool } from "./read-file.js";
import { shellTool } from "./shell.js";
import type { Tool } from "./tool.js";
import { createViewImageTool } from "./view-image.js";
import { writeFileTool } from "./write-file.js";

export interface BuiltinToolOptions {
	/** True when the session's model can see images (default: always true). */
	vision?: () => boolean;
	/** The session's attachment store (default: `<os tmpdir>/snowpea-attachments`). */
	attachmentDirectory?: () => string;
	/** The session's model id, named in view_image's error on a model without vision. */
	model?: () => string;
}

/** The core tools, always in this order (the order is part of the cached prompt prefix). */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
	return [
		readFileTool,
		createViewImageTool({
			vision: options.vision ?? (() => true),
			directory: options.attachmentDirectory ?? (() => join(tmpdir(), "snowpea-attachments")),
			model: options.model,
		}),
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
