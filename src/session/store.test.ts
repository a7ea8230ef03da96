import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../agent/events.js";
import type { Message } from "../llm/types.js";
import { MIGRATIONS, type Migration, migrate, SCHEMA_VERSION, userVersion } from "./migrations.js";
import { FULL_TEXT_FILE_THRESHOLD, SessionStore } from "./store.js";

let home: string;
let databasePath: string;
const open: SessionStore[] = [];

function openStore(path = databasePath): SessionStore {
	const store = SessionStore.open(path);
	open.push(store);
	return store;
}

beforeEach(() => {
	home = mkdtempSync(join(tmpdir(), "snowpea-store-"));
	databasePath = join(home, "state", "state.db");
});

afterEach(() => {
	for (const store of open.splice(0)) store.close();
	rmSync(home, { recursive: true, force: true });
});

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const EVERY_MESSAGE: Message[] = [
	{ role: "user", content: [{ type: "text", text: "fix the failing test ✓" }] },
	{
		role: "user",
		content: [
			{ type: "text", text: "here is the screenshot" },
			{ type: "image", mime: "image/png", data: PNG },
			{ type: "image", mime: "image/webp", data: "UklGRg==" },
		],
	},
	{ role: "assistant", text: "Looking.", toolCalls: [] },
	{
		role: "assistant",
		text: "",
		toolCalls: [
			{ id: "call_1", name: "read", arguments: '{"path":"src/a.ts"}' },
			{ id: "call_2", name: "bash", arguments: '{"command": "npm te' },
		],
	},
	{ role: "tool", toolCallId: "call_1", toolName: "read", content: "export const a = 1;\n", isError: false },
	{ role: "tool", toolCallId: "call_2", toolName: "bash", content: "invalid arguments", isError: true },
];

const USAGE = { input: 1200, output: 80, cacheRead: 1000, cacheWrite: 150, raw: { prompt_tokens: 1200 } };

const EVERY_EVENT: AgentEvent[] = [
	{ type: "session.started", sessionId: "s", resumed: false },
	{ type: "turn.started", round: 1 },
	{ type: "text.delta", text: "Look" },
	{ type: "tool.call", id: "call_1", name: "read", arguments: '{"path":"src/a.ts"}' },
	{ type: "tool.result", id: "call_1", name: "read", ok: true, output: "x", display: "read src/a.ts" },
	{ type: "tool.result", id: "call_2", name: "bash", ok: false, output: "bad", errorCode: "invalid_arguments" },
	{ type: "usage", round: 1, usage: USAGE },
	{
		type: "context",
		report: {
			round: 1,
			system: { bytes: 10, tokens: 3 },
			tools: { bytes: 20, tokens: 5 },
			messages: { bytes: 30, tokens: 8 },
			toolResults: { bytes: 5, tokens: 1 },
			total: { bytes: 65, tokens: 17 },
		},
	},
	{ type: "retry", attempt: 1, delayMs: 500, reason: "rate limited" },
	{ type: "loop.suspected", tool: "read", count: 3 },
	{ type: "error", message: "boom", kind: "server" },
	{ type: "turn.done", stopReason: "done", rounds: 2 },
];

function userText(text: string): Message {
	return { role: "user", content: [{ type: "text", text }] };
}

describe("SessionStore round trip", () => {
	it("returns every kind of message exactly as appended, in seq order, with full outputs", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/repo", model: "gpt-test" });
		const seqs = EVERY_MESSAGE.map((message, index) =>
			store.appendMessage(session.id, message, {
				round: Math.floor(index / 2),
				...(index === 4 ? { fullText: "the whole file\n".repeat(100) } : {}),
				...(index === 5 ? { fullPath: "/elsewhere/output.txt" } : {}),
			}),
		);
		expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
		store.close();

		const stored = openStore().messages(session.id);
		expect(stored.map((row) => row.message)).toEqual(EVERY_MESSAGE);
		expect(stored.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6]);
		expect(stored.map((row) => row.round)).toEqual([0, 0, 1, 1, 2, 2]);
		expect(stored[4]?.fullText).toBe("the whole file\n".repeat(100));
		expect(stored[4]?.fullPath).toBeUndefined();
		expect(stored[5]?.fullPath).toBe("/elsewhere/output.txt");
		expect(stored[0]).not.toHaveProperty("fullText");
		expect(stored.every((row) => Number.isInteger(row.createdAt) && row.createdAt > 0)).toBe(true);
	});

	it("returns every kind of event and decision as appended, filters events by type, sums usage", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/repo", model: "m" });
		expect(store.usageTotals(session.id)).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 });
		for (const event of EVERY_EVENT) store.appendEvent(session.id, event);
		store.appendEvent(session.id, { type: "usage", round: 2, usage: { ...USAGE, input: 300, cacheRead: 0 } });
		store.appendDecision(session.id, { round: 1, kind: "cap", body: { callId: "call_1", kept: 4096 } });
		store.appendDecision(session.id, { round: 2, kind: "drop", body: { seqs: [4, 5], reason: "stale read" } });

		const events = store.events(session.id);
		expect(events.map((row) => row.event)).toEqual([
			...EVERY_EVENT,
			{ type: "usage", round: 2, usage: { ...USAGE, input: 300, cacheRead: 0 } },
		]);
		expect(events.map((row) => row.seq)).toEqual(events.map((_, index) => index + 1));
		expect(store.events(session.id, { types: ["tool.call", "turn.done"] }).map((row) => row.event.type)).toEqual([
			"tool.call",
			"turn.done",
		]);
		expect(store.events(session.id, { types: [] })).toEqual([]);
		// the newest of one type, without reading the rest
		expect(store.latestEvent(session.id, "usage")?.event).toEqual({
			type: "usage",
			round: 2,
			usage: { ...USAGE, input: 300, cacheRead: 0 },
		});
		expect(store.latestEvent(session.id, "usage")?.seq).toBe(events.length);
		expect(store.latestEvent(session.id, "guard.state")).toBeUndefined();
		expect(store.latestEvent("no-such-session", "usage")).toBeUndefined();
		expect(store.decisions(session.id)).toEqual([
			expect.objectContaining({ seq: 1, round: 1, kind: "cap", body: { callId: "call_1", kept: 4096 } }),
			expect.objectContaining({ seq: 2, round: 2, kind: "drop", body: { seqs: [4, 5], reason: "stale read" } }),
		]);
		expect(store.usageTotals(session.id)).toEqual({
			input: 1500,
			output: 160,
			cacheRead: 1000,
			cacheWrite: 300,
			requests: 2,
		});
		// a compaction's summary call is a provider request too; one without a call (a digest) is not
		store.appendEvent(session.id, {
			type: "compaction",
			round: 3,
			source: "summary",
			trigger: "size",
			tokensBefore: 9000,
			tokensAfter: 2000,
			usage: { ...USAGE, input: 900, output: 40, cacheRead: 880, cacheWrite: 0 },
		});
		store.appendEvent(session.id, {
			type: "compaction",
			round: 4,
			source: "digest",
			trigger: "size",
			tokensBefore: 9000,
			tokensAfter: 2100,
		});
		expect(store.usageTotals(session.id)).toMatchObject({ input: 2400, output: 200, requests: 3 });
	});

	it("counts seqs per session, so interleaved sessions each start at 1", () => {
		const store = openStore();
		const first = store.createSession({ cwd: "/a", model: "m" });
		const second = store.createSession({ cwd: "/b", model: "m" });
		const order: [string, number][] = [];
		for (let index = 0; index < 5; index++) {
			order.push([first.id, store.appendMessage(first.id, userText(`a${index}`), { round: 0 })]);
			order.push([second.id, store.appendMessage(second.id, userText(`b${index}`), { round: 0 })]);
		}
		expect(store.messages(first.id).map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
		expect(store.messages(second.id).map((row) => row.message)).toEqual(
			[0, 1, 2, 3, 4].map((index) => userText(`b${index}`)),
		);
		expect(store.appendEvent(first.id, { type: "turn.started", round: 1 })).toBe(1);
		expect(store.messages("no-such-session")).toEqual([]);
	});

	it("refuses to append to a session that does not exist", () => {
		const store = openStore();
		expect(() => store.appendMessage("missing", userText("hi"), { round: 0 })).toThrow("no session missing");
		expect(() => store.appendEvent("missing", { type: "turn.started", round: 0 })).toThrow("no session missing");
		expect(() => store.appendDecision("missing", { round: 0, kind: "k", body: {} })).toThrow("no session missing");
	});

	it("keeps messages, events and decisions append-only even against raw SQL", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/a", model: "m" });
		store.appendMessage(session.id, userText("keep me"), { round: 0 });
		store.appendEvent(session.id, { type: "turn.started", round: 0 });
		store.appendDecision(session.id, { round: 0, kind: "k", body: {} });
		const raw = new Database(databasePath);
		try {
			expect(() => raw.prepare("UPDATE messages SET body = '{}'").run()).toThrow(/append-only/);
			expect(() => raw.prepare("DELETE FROM messages").run()).toThrow(/append-only/);
			expect(() => raw.prepare("DELETE FROM events").run()).toThrow(/append-only/);
			expect(() => raw.prepare("UPDATE decisions SET kind = 'x'").run()).toThrow(/append-only/);
		} finally {
			raw.close();
		}
		expect(store.messages(session.id).map((row) => row.message)).toEqual([userText("keep me")]);
	});
});

describe("SessionStore sessions", () => {
	it("creates sessions with a UUID by default and validates given ids and parents", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/repo", model: "m", title: "t", meta: { mode: "ask" } });
		expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
		expect(store.getSession(session.id)).toEqual(session);
		expect(session).toMatchObject({ cwd: "/repo", model: "m", title: "t", status: "active", meta: { mode: "ask" } });
		expect(session).not.toHaveProperty("parentId");

		expect(() => store.createSession({ cwd: "/", model: "m", id: "../../etc" })).toThrow(/invalid session id/);
		expect(() => store.createSession({ cwd: "/", model: "m", id: "a b" })).toThrow(/invalid session id/);
		expect(() => store.createSession({ cwd: "/", model: "m", id: "" })).toThrow(/invalid session id/);
		expect(() => store.createSession({ cwd: "/", model: "m", id: session.id })).toThrow(/already exists/);
		expect(() => store.createSession({ cwd: "/", model: "m", parentId: "nope" })).toThrow(
			"parent session nope does not exist",
		);
		const child = store.createSession({ cwd: "/repo", model: "m", parentId: session.id, id: "child_1-A" });
		expect(store.getSession("child_1-A")?.parentId).toBe(session.id);
		expect(child.id).toBe("child_1-A");
	});

	it("finds a session by a unique prefix of 4 or more characters and names the matches when ambiguous", () => {
		const store = openStore();
		for (const id of ["abcd1111", "abcd2222", "abce3333", "xy"]) store.createSession({ cwd: "/", model: "m", id });
		expect(store.getSession("abcd1")?.id).toBe("abcd1111");
		expect(store.getSession("abce")?.id).toBe("abce3333");
		expect(store.getSession("xy")?.id).toBe("xy");
		expect(() => store.getSession("abcd")).toThrow(/ambiguous.*abcd1111, abcd2222/);
		expect(store.getSession("abc")).toBeUndefined();
		expect(store.getSession("ABCD1")).toBeUndefined();
		expect(store.getSession("zzzz")).toBeUndefined();
		expect(store.getSession("abc*")).toBeUndefined();
	});

	it("lists sessions most recently used first, filters by parent and cwd", () => {
		const store = openStore();
		const older = store.createSession({ cwd: "/one", model: "m", id: "older" });
		const newer = store.createSession({ cwd: "/two", model: "m", id: "newer" });
		const child = store.createSession({ cwd: "/two", model: "m", id: "child", parentId: older.id });
		expect(store.listSessions().map((session) => session.id)).toEqual(["child", "newer", "older"]);

		// Writing to a session makes it the most recent, even within the same millisecond.
		store.appendMessage(older.id, userText("back again"), { round: 0 });
		expect(store.listSessions().map((session) => session.id)).toEqual(["older", "child", "newer"]);
		expect(store.listSessions({ limit: 2 }).map((session) => session.id)).toEqual(["older", "child"]);
		expect(store.listSessions({ parentId: null }).map((session) => session.id)).toEqual(["older", "newer"]);
		expect(store.listSessions({ parentId: older.id }).map((session) => session.id)).toEqual(["child"]);
		expect(() => store.listSessions({ limit: 0 })).toThrow(/positive integer/);

		expect(store.latestSession()?.id).toBe("older");
		expect(store.latestSession({ cwd: "/two" })?.id).toBe("child");
		expect(store.latestSession({ cwd: "/two", parentId: null })?.id).toBe(newer.id);
		expect(store.latestSession({ cwd: "/nowhere" })).toBeUndefined();
		expect(store.getSession(older.id)?.updatedAt).toBeGreaterThanOrEqual(older.updatedAt);
		expect(child.parentId).toBe("older");
	});

	it("updates metadata only, and makes the session the most recent", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/", model: "m1", id: "first", meta: { a: 1 } });
		store.createSession({ cwd: "/", model: "m1", id: "second" });
		store.appendMessage(session.id, userText("hello"), { round: 0 });
		store.createSession({ cwd: "/", model: "m1", id: "third" });

		store.updateSession("first", { title: "Fix the parser", status: "done", model: "m2", meta: { b: [2] } });
		expect(store.getSession("first")).toMatchObject({
			title: "Fix the parser",
			status: "done",
			model: "m2",
			meta: { b: [2] },
			cwd: "/",
		});
		store.updateSession("first", { status: "active" });
		expect(store.getSession("first")).toMatchObject({ title: "Fix the parser", status: "active", meta: { b: [2] } });
		expect(store.latestSession()?.id).toBe("first");
		expect(store.messages("first").map((row) => row.message)).toEqual([userText("hello")]);
		expect(() => store.updateSession("nope", { title: "x" })).toThrow("no session nope");
	});
});

describe("SessionStore full tool output", () => {
	it("writes a full output over 4 MiB to a 0600 file in a 0700 directory and stores its path", () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/", model: "m" });
		const result: Message = { role: "tool", toolCallId: "c", toolName: "bash", content: "…capped", isError: false };
		// 2 Mi characters of two bytes each plus one: over 4 MiB in UTF-8 though well under it in characters.
		const big = `${"é".repeat(FULL_TEXT_FILE_THRESHOLD / 2)}!`;
		const justFits = "x".repeat(FULL_TEXT_FILE_THRESHOLD);
		store.appendMessage(session.id, userText("go"), { round: 0 });
		const seq = store.appendMessage(session.id, result, { round: 1, fullText: big });
		store.appendMessage(session.id, result, { round: 1, fullText: justFits });

		const [, spilled, inline] = store.messages(session.id);
		const expectedPath = join(dirname(databasePath), "sessions", session.id, "outputs", `${seq}.txt`);
		expect(spilled?.fullPath).toBe(expectedPath);
		expect(spilled?.fullText).toBeUndefined();
		expect(spilled?.message).toEqual(result);
		expect(readFileSync(expectedPath, "utf8")).toBe(big);
		expect(statSync(expectedPath).mode & 0o777).toBe(0o600);
		expect(statSync(dirname(expectedPath)).mode & 0o777).toBe(0o700);
		expect(inline?.fullText).toBe(justFits);
		expect(inline?.fullPath).toBeUndefined();
		expect(() => store.appendMessage(session.id, result, { round: 1, fullText: "a", fullPath: "/b" })).toThrow(
			/not both/,
		);
	});
});

describe("SessionStore open and migrations", () => {
	it("creates a private directory and file, in WAL mode, at the current schema version", () => {
		const store = openStore();
		store.createSession({ cwd: "/", model: "m" });
		expect(statSync(dirname(databasePath)).mode & 0o777).toBe(0o700);
		expect(statSync(databasePath).mode & 0o777).toBe(0o600);
		expect(statSync(`${databasePath}-wal`).mode & 0o777).toBe(0o600);
		const raw = new Database(databasePath, { readonly: true });
		try {
			expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
			expect(userVersion(raw)).toBe(SCHEMA_VERSION);
			const tables = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
			expect(tables).toEqual(["decisions", "events", "messages", "sessions"]);
		} finally {
			raw.close();
		}
	});

	it("reopens an existing file without migrating again and keeps its data", () => {
		const first = openStore();
		const session = first.createSession({ cwd: "/", model: "m", title: "kept" });
		first.appendMessage(session.id, userText("still here"), { round: 0 });
		first.close();
		const second = openStore();
		expect(second.getSession(session.id)?.title).toBe("kept");
		expect(second.messages(session.id).map((row) => row.message)).toEqual([userText("still here")]);
		expect(second.listSessions()).toHaveLength(1);
	});

	it("opens an empty existing file as a new database", () => {
		const path = join(home, "empty.db");
		writeFileSync(path, "");
		const store = openStore(path);
		expect(store.createSession({ cwd: "/", model: "m" }).status).toBe("active");
	});

	it("applies only the missing steps, in order, and rolls a failed step back completely", () => {
		const path = join(home, "custom.db");
		const raw = new Database(path);
		try {
			const applied: number[] = [];
			const step = (version: number, sql: string): Migration => ({
				version,
				description: `step ${version}`,
				up(database) {
					applied.push(version);
					database.exec(sql);
				},
			});
			const one = step(1, "CREATE TABLE one (x)");
			const two = step(2, "CREATE TABLE two (x)");
			expect(migrate(raw, path, [one])).toBe(1);
			expect(migrate(raw, path, [one, two])).toBe(2);
			expect(applied).toEqual([1, 2]);
			expect(migrate(raw, path, [one, two])).toBe(2);
			expect(applied).toEqual([1, 2]);

			const broken = step(3, "CREATE TABLE three (x); INSERT INTO nowhere VALUES (1)");
			expect(() => migrate(raw, path, [one, two, broken])).toThrow(/schema migration 3 \(step 3\) failed.*nowhere/);
			expect(userVersion(raw)).toBe(2);
			expect(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'three'").get()).toBeUndefined();
			expect(() => migrate(raw, path, [two])).toThrow(/out of order/);
		} finally {
			raw.close();
		}
		expect(MIGRATIONS.map((migration) => migration.version)).toEqual(
			Array.from({ length: SCHEMA_VERSION }, (_, index) => index + 1),
		);
	});

	it("refuses a database written by a newer snowpea, naming the file", () => {
		openStore().close();
		const raw = new Database(databasePath);
		raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
		raw.close();
		expect(() => openStore()).toThrow(databasePath);
		expect(() => openStore()).toThrow(/newer snowpea/);
	});

	it("reports a corrupt or unreadable file with its path", () => {
		const corrupt = join(home, "corrupt.db");
		writeFileSync(corrupt, "this is not a database, just some text that is long enough to have a header\n".repeat(20));
		expect(() => openStore(corrupt)).toThrow(`cannot open the session database ${corrupt}: file is not a database`);
		// A file where the state directory should be: the parent directory cannot be created.
		writeFileSync(join(home, "blocker"), "");
		const underFile = join(home, "blocker", "state.db");
		expect(() => openStore(underFile)).toThrow(`cannot open the session database ${underFile}`);
	});
});

// The multi-process tests drive the compiled store (npm test builds first) from plain Node child processes.
const COMPILED_STORE = resolve(import.meta.dirname, "../../dist/session/store.js");
const WRITER = resolve(import.meta.dirname, "../../test/support/store-writer.mjs");
const compiled = existsSync(COMPILED_STORE);
if (!compiled) console.warn(`skipping multi-process store tests: ${COMPILED_STORE} is missing; run npm run build`);

interface Writer {
	child: ChildProcessWithoutNullStreams;
	/** Every "<seq> <index>" line printed after a committed append. */
	lines: string[];
	ready: Promise<void>;
	exited: Promise<number | null>;
	/** Resolves once at least `count` appends have been reported. */
	appended(count: number): Promise<void>;
}

function startWriter(sessionId: string, label: string, count: number | "forever"): Writer {
	const child = spawn(process.execPath, [WRITER, COMPILED_STORE, databasePath, sessionId, label, String(count)]);
	const lines: string[] = [];
	const waiters: { count: number; resolve: () => void }[] = [];
	let stderr = "";
	child.stderr.on("data", (chunk) => {
		stderr += String(chunk);
	});
	let markReady: () => void = () => {};
	const ready = new Promise<void>((resolve) => {
		markReady = resolve;
	});
	createInterface({ input: child.stdout }).on("line", (line) => {
		if (line === "ready") return markReady();
		lines.push(line);
		for (const waiter of waiters.filter((entry) => lines.length >= entry.count)) waiter.resolve();
	});
	const exited = new Promise<number | null>((resolve) =>
		child.on("exit", (code) => {
			if (code !== 0 && code !== null) console.error(`store writer ${label} failed:\n${stderr}`);
			markReady();
			for (const waiter of waiters) waiter.resolve();
			resolve(code);
		}),
	);
	return {
		child,
		lines,
		ready,
		exited,
		appended: (wanted) => new Promise<void>((resolve) => waiters.push({ count: wanted, resolve })),
	};
}

describe.skipIf(!compiled)("SessionStore across processes (needs npm run build)", () => {
	it("two processes appending 200 messages each to one session get 400 distinct seqs 1..400", async () => {
		const session = openStore().createSession({ cwd: "/", model: "m", id: "shared" });
		const writers = [startWriter(session.id, "left", 200), startWriter(session.id, "right", 200)];
		await Promise.all(writers.map((writer) => writer.ready));
		for (const writer of writers) writer.child.stdin.write("go\n");
		expect(await Promise.all(writers.map((writer) => writer.exited))).toEqual([0, 0]);

		const stored = openStore().messages(session.id);
		expect(stored.map((row) => row.seq)).toEqual(Array.from({ length: 400 }, (_, index) => index + 1));
		for (const label of ["left", "right"]) {
			const texts = stored
				.map((row) => (row.message.role === "user" ? row.message.content[0] : undefined))
				.flatMap((part) => (part?.type === "text" && part.text.startsWith(`${label} `) ? [part.text] : []));
			// Each writer's messages are all there, in the order it appended them.
			expect(texts).toEqual(Array.from({ length: 200 }, (_, index) => `${label} ${index}`));
		}
		// Every seq a writer was handed is the seq its message is stored under.
		const bySeq = new Map(stored.map((row) => [row.seq, row.round]));
		for (const writer of writers) {
			for (const line of writer.lines) {
				const [seq, index] = line.split(" ").map(Number);
				expect(bySeq.get(seq as number)).toBe(index);
			}
		}
	});

	it("a writer killed with SIGKILL mid-loop leaves a readable database with every committed row", async () => {
		const store = openStore();
		const session = store.createSession({ cwd: "/", model: "m", id: "killed" });
		const writer = startWriter(session.id, "doomed", "forever");
		await writer.ready;
		writer.child.stdin.write("go\n");
		await writer.appended(50);
		writer.child.kill("SIGKILL");
		expect(await writer.exited).toBeNull();
		const reported = [...writer.lines];

		const reopened = openStore();
		const stored = reopened.messages(session.id);
		expect(stored.length).toBeGreaterThanOrEqual(reported.length);
		expect(stored.map((row) => row.seq)).toEqual(stored.map((_, index) => index + 1));
		for (const line of reported) {
			const [seq, index] = line.split(" ").map(Number);
			expect(stored[(seq as number) - 1]?.message).toEqual(userText(`doomed ${index}`));
		}
		const next = reopened.appendMessage(session.id, userText("after the crash"), { round: 0 });
		expect(next).toBe(stored.length + 1);
		const raw = new Database(databasePath, { readonly: true });
		try {
			expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
		} finally {
			raw.close();
		}
	});
});
