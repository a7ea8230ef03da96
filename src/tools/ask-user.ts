import { z } from "zod";
import { defineTool, failure } from "./tool.js";

const parameters = z.object({
	question: z.string().min(1).describe("One clear question; say what you will do with each likely answer."),
});

/** What the model is told when no person can answer. */
export const HEADLESS_ANSWER = "nobody can answer: this is a headless run; decide yourself and state your assumption";

/** ask_user: asks the person a question and waits for the answer (interactive sessions only). */
export const askUserTool = defineTool({
	name: "ask_user",
	description: [
		"Ask the person a question and wait for the answer. Only for decisions you cannot make from the code or the",
		"request; in headless runs nobody answers and you must decide yourself.",
	].join(" "),
	parameters,
	permission: "read",
	readOnly: true,
	async run(args, context) {
		if (!context.askUser) return failure("headless", HEADLESS_ANSWER);
		if (context.signal.aborted) return failure("aborted", "ask_user: aborted");
		const askUser = context.askUser;
		const answer = await new Promise<string | undefined>((resolvePromise, reject) => {
			const onAbort = () => resolvePromise(undefined);
			context.signal.addEventListener("abort", onAbort, { once: true });
			askUser(args.question).then(
				(text) => {
					context.signal.removeEventListener("abort", onAbort);
					resolvePromise(text);
				},
				(error: unknown) => {
					context.signal.removeEventListener("abort", onAbort);
					reject(error);
				},
			);
		});
		if (answer === undefined) return failure("aborted", "ask_user: aborted before an answer came");
		const trimmed = answer.trim();
		return {
			ok: true,
			content: trimmed === "" ? "(the person gave an empty answer)" : answer,
			display: trimmed === "" ? "(empty answer)" : trimmed.split("\n")[0],
		};
	},
});
