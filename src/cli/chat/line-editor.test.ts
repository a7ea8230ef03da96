import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineEditor } from "./line-editor.js";

function terminal(historyFile?: string) {
	const input = new PassThrough();
	const output = new PassThrough();
	let shown = "";
	output.on("data", (chunk: Buffer) => {
		shown += chunk.toString();
	});
	const editor = new LineEditor({ input, output, terminal: true, historyFile });
	return { input, editor, shown: () => shown };
}

describe("LineEditor", () => {
	it("joins lines ending in a backslash into one entry", async () => {
		const { input, editor, shown } = terminal();
		const entry = editor.read("› ");
		input.write("first line \\\r");
		input.write("second line\r");
		expect(await entry).toBe("first line \nsecond line");
		expect(shown()).toContain("… ");
		editor.close();
	});

	it("ends a line with Alt-Enter as a continuation", async () => {
		const { input, editor } = terminal();
		const entry = editor.read("› ");
		input.write("one");
		input.write("\x1b\r");
		input.write("two\r");
		expect(await entry).toBe("one\ntwo");
		editor.close();
	});

	it("keeps lines typed while nothing reads for the next read", async () => {
		const { input, editor } = terminal();
		input.write("typed ahead\r");
		await new Promise((resolve) => setImmediate(resolve));
		expect(await editor.read("› ")).toBe("typed ahead");
		editor.close();
	});

	it("persists history (0600) and offers it to the next session with Up", async () => {
		const file = join(mkdtempSync(join(tmpdir(), "snowpea-history-")), "history");
		writeFileSync(file, "older prompt\n");
		const first = terminal(file);
		const entry = first.editor.read("› ");
		first.input.write("newest prompt\r");
		expect(await entry).toBe("newest prompt");
		first.editor.close();
		expect(readFileSync(file, "utf8")).toBe("older prompt\nnewest prompt\n");
		expect(statSync(file).mode & 0o777).toBe(0o600);

		const second = terminal(file);
		const recalled = second.editor.read("› ");
		second.input.write("\x1b[A\x1b[A\r");
		expect(await recalled).toBe("older prompt");
		second.editor.close();
	});

	it("does not keep answers to questions in history, and a question ends when its signal aborts", async () => {
		const file = join(mkdtempSync(join(tmpdir(), "snowpea-history-")), "history");
		const { input, editor } = terminal(file);
		const answer = editor.question("allow? ");
		input.write("y\r");
		expect(await answer).toBe("y");
		const controller = new AbortController();
		const pending = editor.question("allow? ", controller.signal);
		controller.abort();
		expect(await pending).toBeUndefined();
		const entry = editor.read("› ");
		input.write("a prompt\r");
		expect(await entry).toBe("a prompt");
		editor.close();
		expect(readFileSync(file, "utf8")).toBe("a prompt\n");
	});

	it("calls the interrupt handler on Ctrl-C and resolves a read with undefined on Ctrl-D", async () => {
		const { input, editor } = terminal();
		let interrupts = 0;
		editor.onInterrupt(() => interrupts++);
		const entry = editor.read("› ");
		input.write("\x03");
		input.write("\x04");
		expect(await entry).toBeUndefined();
		expect(interrupts).toBe(1);
		expect(editor.isClosed).toBe(true);
	});
});
