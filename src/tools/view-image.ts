import { z } from "zod";
import { imageSummary, storeImageFile } from "./attachments.js";
import { resolvePath, showPath } from "./paths.js";
import { defineTool, failure, type Tool } from "./tool.js";

export interface ViewImageOptions {
	/** True when the session's model can see images; asked at every call (the model can change mid-session). */
	vision: () => boolean;
	/** The attachment store the stored copies go to. */
	directory: () => string;
	/** The session's model id ("openai:gpt-4o"), for the error on a model without vision. */
	model?: () => string;
}

/** Models named in the error a text-only model gets. */
const VISION_EXAMPLES = "anthropic:claude-sonnet-4-5 or openai:gpt-4o";

const parameters = z.object({
	path: z
		.string()
		.min(1)
		.describe("Image file (PNG, JPEG, GIF or WebP), relative to the working directory or absolute."),
	detail: z
		.enum(["auto", "low"])
		.optional()
		.describe('"low" sends at most 768 px on the long edge (cheaper); "auto" (default) at most 1,568 px.'),
});

/**
 * view_image: stores a downscaled copy of an image file in the attachment store and answers with one line; the loop
 * then attaches the picture in a user message after the round's results. Refused on a model without vision.
 */
export function createViewImageTool(options: ViewImageOptions): Tool {
	return defineTool({
		name: "view_image",
		description: [
			"Look at an image file (PNG, JPEG, GIF or WebP, up to 20 MiB): the picture is attached to the conversation",
			'right after this call\'s result. It is downscaled to 1,568 px on the long edge (768 with detail "low");',
			"an animated GIF shows its first frame. Use it for screenshots, diagrams and UI mockups; read_file cannot show",
			"images.",
		].join(" "),
		parameters,
		permission: "read",
		readOnly: true,
		async run(args, context) {
			const absolute = resolvePath(context.cwd, args.path);
			const shown = showPath(context.cwd, absolute);
			if (!options.vision()) {
				const model = options.model?.();
				return failure(
					"no_vision",
					`view_image: ${model ? `the model ${model}` : "this model"} cannot see images; switch to a vision model (e.g. ${VISION_EXAMPLES}) to look at ${shown}`,
				);
			}
			const stored = await storeImageFile(absolute, {
				directory: options.directory(),
				detail: args.detail,
				shownAs: shown,
			});
			if ("error" in stored) {
				const hint =
					stored.code === "not_found"
						? "; check the path (glob or list_dir)"
						: stored.code === "not_an_image"
							? "; read_file shows text files"
							: "";
				return failure(stored.code, `view_image: ${stored.error}${hint}`);
			}
			const summary = imageSummary(stored);
			return {
				ok: true,
				content: `image attached: ${summary}`,
				display: `${shown}: ${stored.width}×${stored.height} ${stored.mime}`,
				details: { path: absolute, stored: stored.path, sha256: stored.sha256 },
				images: [stored],
			};
		},
	});
}
