import type { AgentEvent } from "../agent/events.js";

/** How the CLI writes: answer text to one stream, the tool log and notices to another. */
export interface Output {
	out(text: string): void;
	log(text: string): void;
}

/** One line for a tool call in the compact log. */
export function describeCall(name: string, rawArguments: string): string {
	const flat = rawArguments.replace(/\s+/g, " ").trim();
	return `→ ${name} ${flat.length > 100 ? `${flat.slice(0, 99)}…` : flat}`;
}

/** One line for a tool result in the compact log. */
export function describeResult(event: Extract<AgentEvent, { type: "tool.result" }>): string {
	const first = (event.display ?? event.output).split("\n").find((line) => line.trim() !== "") ?? "";
	const clipped = first.length > 120 ? `${first.slice(0, 119)}…` : first;
	return `${event.ok ? "✓" : "✗"} ${event.name}: ${clipped}`;
}

/**
 * Text mode: the answer streams to `out`; tool calls, results, retries and errors go to `log` one line each.
 * Returns a function that renders one event.
 */
export function textRenderer(output: Output): (event: AgentEvent) => void {
	let midLine = false;
	const endLine = () => {
		if (midLine) output.out("\n");
		midLine = false;
	};
	return (event) => {
		switch (event.type) {
			case "text.delta":
				output.out(event.text);
				midLine = !event.text.endsWith("\n");
				return;
			case "tool.call":
				endLine();
				output.log(`${describeCall(event.name, event.arguments)}\n`);
				return;
			case "tool.result":
				output.log(`${describeResult(event)}\n`);
				return;
			case "retry":
				output.log(
					`retrying in ${Math.round(event.delayMs / 100) / 10}s (attempt ${event.attempt}): ${event.reason}\n`,
				);
				return;
			case "compaction":
				endLine();
				output.log(`compacted (${event.source}): ${event.tokensBefore} → ${event.tokensAfter} tokens\n`);
				return;
			case "warning":
				endLine();
				output.log(`warning: ${event.message}\n`);
				return;
			case "loop.suspected":
				output.log(`loop suspected: ${event.tool} ×${event.count}\n`);
				return;
			case "error":
				endLine();
				output.log(`error: ${event.message}\n`);
				return;
			case "turn.done":
				endLine();
				if (event.stopReason === "max_rounds") output.log(`stopped: reached the limit of ${event.rounds} rounds\n`);
				else if (event.stopReason === "aborted") output.log("stopped: interrupted\n");
				else if (event.stopReason !== "done" && event.stopReason !== "error")
					output.log(`stopped: ${event.stopReason}\n`);
				return;
			default:
				return;
		}
	};
}
