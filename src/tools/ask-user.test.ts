import { describe, expect, it } from "vitest";
import { askUserTool } from "./ask-user.js";
import type { ToolContext } from "./tool.js";

const context = (overrides: Partial<ToolContext> = {}): ToolContext => ({
	cwd: "/tmp",
	home: "/tmp/home",
	sessionId: "s",
	callId: "c",
	signal: new AbortController().signal,
	spillDir: "/tmp/spill",
	...overrides,
});

describe("ask_user", () => {
	it("tells the model to decide itself in a headless run", async () => {
		const result = await askUserTool.execute(JSON.stringify({ question: "Which database?" }), context());
		expect(result).toEqual({
			ok: false,
			errorCode: "headless",
			content: "nobody can answer: this is a headless run; decide yourself and state your assumption",
		});
	});

	it("asks the person and returns the answer", async () => {
		const asked: string[] = [];
		const askUser = async (question: string) => {
			asked.push(question);
			return "Postgres, please";
		};
		const result = await askUserTool.execute(JSON.stringify({ question: "Which database?" }), context({ askUser }));
		expect(asked).toEqual(["Which database?"]);
		expect(result).toMatchObject({ ok: true, content: "Postgres, please" });
	});

	it("stops waiting when the turn is aborted", async () => {
		const controller = new AbortController();
		const askUser = () => {
			controller.abort();
			return new Promise<string>(() => {});
		};
		const result = await askUserTool.execute(
			JSON.stringify({ question: "Still there?" }),
			context({ askUser, signal: controller.signal }),
		);
		expect(result).toMatchObject({ ok: false, errorCode: "aborted" });
	});

	it("rejects an empty question as invalid arguments", async () => {
		const result = await askUserTool.execute(JSON.stringify({ question: "" }), context());
		expect(result).toMatchObject({ ok: false, errorCode: "invalid_arguments" });
	});
});
