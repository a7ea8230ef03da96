// A second process for the session-store tests: opens the store at a database path and appends user messages to
// one session, printing "<seq> <index>" after each append has committed.
// Usage: node store-writer.mjs <compiled store.js> <database path> <session id> <label> <count | "forever">
// Prints "ready" once the store is open, then waits for a line on stdin before appending, so a test can start
// several writers at the same moment.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [modulePath, databasePath, sessionId, label, countText] = process.argv.slice(2);
const { SessionStore } = await import(pathToFileURL(modulePath).href);
const store = SessionStore.open(databasePath);
process.stdout.write("ready\n");

const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
lines.close();

const count = countText === "forever" ? Number.POSITIVE_INFINITY : Number(countText);
for (let index = 0; index < count; index++) {
	const message = { role: "user", content: [{ type: "text", text: `${label} ${index}` }] };
	const seq = store.appendMessage(sessionId, message, { round: index });
	process.stdout.write(`${seq} ${index}\n`);
	// Let the other writer take the lock between appends.
	await new Promise((resolve) => setTimeout(resolve, 1));
}
store.close();
