import { randomUUID } from "node:crypto";
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";
import type { AgentEvent } from "../agent/events.js";
import type { Message } from "../llm/types.js";
import { migrate } from "./migrations.js";

/** One session's metadata. Times are milliseconds since the Unix epoch. */
export interface SessionInfo {
	id: string;
	parentId?: string;
	createdAt: number;
	updatedAt: number;
	cwd: string;
	model: string;
	title: string;
	status: string;
	meta: Record<string, unknown>;
}

/** A message as recorded. `seq` counts a session's messages from 1; `createdAt` is in epoch milliseconds. */
export interface StoredMessage {
	seq: number;
	round: number;
	message: Message;
	/** A tool's complete output when the model-facing content was capped (up to 4 MiB). */
	fullText?: string;
	/** Instead of fullText when that output was over 4 MiB: the file (mode 0600) holding it. */
	fullPath?: string;
	createdAt: number;
}

/** An agent event as recorded. `seq` counts a session's events from 1. */
export interface StoredEvent {
	seq: number;
	event: AgentEvent;
	createdAt: number;
}

/** A context-engine ledger decision as recorded. `seq` counts a session's decisions from 1. */
export interface StoredDecision {
	seq: number;
	round: number;
	kind: string;
	body: Record<string, unknown>;
	createdAt: number;
}

/** Token totals over a session's "usage" events; `requests` is how many there were. */
export interface UsageTotals {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	requests: number;
}

/** How long a write waits for another process's lock before failing, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5000;

/** A tool output larger than this many UTF-8 bytes is written to a file instead of the database. */
export const FULL_TEXT_FILE_THRESHOLD = 4 * 1024 * 1024;

/** The shape of every session id snowpea accepts: it names a directory, so nothing else is allowed. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A prefix shorter than this never matches anything but an exact id. */
const MIN_PREFIX_LENGTH = 4;

/** How many matches an ambiguous-prefix error names. */
const AMBIGUITY_LIST_LIMIT = 10;

interface SessionRow {
	id: string;
	parent_id: string | null;
	created_at: number;
	updated_at: number;
	cwd: string;
	model: string;
	title: string;
	status: string;
	meta: string;
}

interface MessageRow {
	seq: number;
	round: number;
	body: string;
	full_text: string | null;
	full_path: string | null;
	created_at: number;
}

interface EventRow {
	seq: number;
	body: string;
	created_at: number;
}

interface DecisionRow {
	seq: number;
	round: number;
	kind: string;
	body: string;
	created_at: number;
}

const SESSION_COLUMNS = "id, parent_id, created_at, updated_at, cwd, model, title, status, meta";

/**
 * The session store: one SQLite file (WAL, busy_timeout 5000 ms, foreign keys on) holding every session's
 * append-only transcript — messages, agent events and ledger decisions.
 *
 * Several processes may use one file at once: every write runs in its own `BEGIN IMMEDIATE` transaction, which
 * allocates the next seq and inserts the row atomically, so seqs never collide and never have gaps. A write that
 * returned is committed: killing the process afterwards (even with SIGKILL) loses nothing. `synchronous=NORMAL`
 * means a power cut may lose the last few commits, but never corrupts the file.
 *
 * Message, event and decision rows are never updated or deleted (triggers refuse it); only session metadata
 * (title, status, model, meta, updated_at) changes. Errors a caller can act on are thrown as one-line `Error`s.
 */
export class SessionStore {
	/** The absolute path of the database file. */
	readonly path: string;
	private readonly database: Database.Database;
	private readonly statements: ReturnType<typeof prepareStatements>;

	private constructor(path: string, database: Database.Database) {
		this.path = path;
		this.database = database;
		this.statements = prepareStatements(database);
	}

	/**
	 * Opens (creating when absent) the database at `path`: the parent directory is created with mode 0700 and a new
	 * file with mode 0600, then the schema is migrated to this build's version.
	 * Throws an `Error` naming the path when the file is not a readable SQLite database, is locked for longer than
	 * the busy timeout, or has a schema newer than this build.
	 */
	static open(path: string): SessionStore {
		const absolute = resolve(path);
		let database: Database.Database | undefined;
		try {
			mkdirSync(dirname(absolute), { recursive: true, mode: 0o700 });
			// Create the file ourselves so it starts private; SQLite gives its -wal and -shm files the same mode.
			closeSync(openSync(absolute, "a", 0o600));
			database = new Database(absolute, { timeout: BUSY_TIMEOUT_MS });
			database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
			const mode = database.pragma("journal_mode = WAL", { simple: true });
			if (String(mode).toLowerCase() !== "wal") throw new Error(`cannot switch to WAL journaling (got ${mode})`);
			database.pragma("synchronous = NORMAL");
			database.pragma("foreign_keys = ON");
			migrate(database, absolute);
			return new SessionStore(absolute, database);
		} catch (error) {
			database?.close();
			// Schema errors from migrate() already name the file; SQLite and file-system errors (which carry a code) do not.
			if (error instanceof Error && !("code" in error) && error.message.includes(absolute)) throw error;
			throw new Error(`cannot open the session database ${absolute}: ${reasonOf(error)}`, { cause: error });
		}
	}

	/** Closes the database. Safe to call more than once; every other method throws afterwards. */
	close(): void {
		if (this.database.open) this.database.close();
	}

	/**
	 * Creates a session and returns it. `id` defaults to a random UUID; a given id must match `[A-Za-z0-9_-]{1,128}`
	 * and be unused. `parentId`, when given, must name an existing session. Title defaults to "", status to "active".
	 */
	createSession(input: {
		cwd: string;
		model: string;
		parentId?: string;
		title?: string;
		meta?: Record<string, unknown>;
		id?: string;
	}): SessionInfo {
		const id = input.id ?? randomUUID();
		checkSessionId(id);
		const metaJson = toJson(input.meta ?? {}, "session meta");
		return this.write(() => {
			if (this.statements.sessionExists.get(id)) throw new Error(`session ${id} already exists`);
			if (input.parentId !== undefined && !this.statements.sessionExists.get(input.parentId)) {
				throw new Error(`parent session ${input.parentId} does not exist`);
			}
			const now = Date.now();
			const info: SessionInfo = {
				id,
				...(input.parentId !== undefined ? { parentId: input.parentId } : {}),
				createdAt: now,
				updatedAt: now,
				cwd: input.cwd,
				model: input.model,
				title: input.title ?? "",
				status: "active",
				meta: JSON.parse(metaJson) as Record<string, unknown>,
			};
			this.statements.insertSession.run(
				id,
				input.parentId ?? null,
				now,
				now,
				info.cwd,
				info.model,
				info.title,
				info.status,
				metaJson,
			);
			return info;
		});
	}

	/**
	 * The session whose id is `idOrPrefix`, or else the one session whose id starts with it (prefixes of at least
	 * 4 characters only). Undefined when nothing matches; throws an `Error` listing the matches when several do.
	 */
	getSession(idOrPrefix: string): SessionInfo | undefined {
		return this.read(() => {
			const exact = this.statements.sessionById.get(idOrPrefix);
			if (exact) return toSessionInfo(exact, this.path);
			if (idOrPrefix.length < MIN_PREFIX_LENGTH || !SESSION_ID.test(idOrPrefix)) return undefined;
			// Ids hold no GLOB metacharacters, so the prefix is literal; GLOB is case-sensitive like the ids.
			const matches = this.statements.sessionsByPrefix.all(`${idOrPrefix}*`, AMBIGUITY_LIST_LIMIT + 1);
			const [first, second] = matches;
			if (!first) return undefined;
			if (!second) return toSessionInfo(first, this.path);
			const names = matches.slice(0, AMBIGUITY_LIST_LIMIT).map((row) => row.id);
			const more = matches.length > AMBIGUITY_LIST_LIMIT ? ", …" : "";
			throw new Error(
				`session prefix "${idOrPrefix}" is ambiguous: it matches ${names.join(", ")}${more}; give more characters`,
			);
		});
	}

	/**
	 * The most recently created or written-to session, optionally only those in `cwd` and/or with parent `parentId`
	 * (null: top-level sessions only — what "continue the last session" wants, so sub-agent sessions are skipped).
	 */
	latestSession(filter: { cwd?: string; parentId?: string | null } = {}): SessionInfo | undefined {
		return this.read(() => {
			const [row] = this.selectSessions({ cwd: filter.cwd, parentId: filter.parentId, limit: 1 });
			return row ? toSessionInfo(row, this.path) : undefined;
		});
	}

	/**
	 * Sessions, most recently created or written-to first. `parentId`: undefined = all sessions, null = top-level
	 * sessions only, a string = that session's children. `limit` must be a positive integer when given.
	 */
	listSessions(options: { limit?: number; parentId?: string | null } = {}): SessionInfo[] {
		const { limit } = options;
		if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
			throw new Error(`session list limit must be a positive integer, got ${limit}`);
		}
		return this.read(() =>
			this.selectSessions({ parentId: options.parentId, limit }).map((row) => toSessionInfo(row, this.path)),
		);
	}

	/**
	 * Changes a session's metadata (an exact id, not a prefix) and sets updated_at to now. `meta` replaces the whole
	 * object. Throws when the session does not exist.
	 */
	updateSession(id: string, patch: Partial<Pick<SessionInfo, "title" | "status" | "model" | "meta">>): void {
		const metaJson = patch.meta === undefined ? null : toJson(patch.meta, "session meta");
		this.write(() => {
			const changed = this.statements.updateSession.run(
				patch.title ?? null,
				patch.status ?? null,
				patch.model ?? null,
				metaJson,
				Date.now(),
				id,
			).changes;
			if (changed === 0) throw new Error(`no session ${id}`);
		});
	}

	/**
	 * Appends a message to session `sessionId` and returns its seq (1 for the session's first message).
	 * `fullText` over 4 MiB (UTF-8) goes to `<directory of the database>/sessions/<id>/outputs/<seq>.txt` (directory
	 * 0700, file 0600) and the row records that path instead. `fullText` and `fullPath` are mutually exclusive.
	 */
	appendMessage(
		sessionId: string,
		message: Message,
		options: { round: number; fullText?: string; fullPath?: string },
	): number {
		checkRound(options.round);
		if (options.fullText !== undefined && options.fullPath !== undefined) {
			throw new Error("a message takes fullText or fullPath, not both");
		}
		const body = toJson(message, "message");
		const fullText = options.fullText;
		const spill = fullText !== undefined && Buffer.byteLength(fullText, "utf8") > FULL_TEXT_FILE_THRESHOLD;
		let written: string | undefined;
		try {
			return this.write(() => {
				this.touch(sessionId);
				const seq = this.statements.nextMessageSeq.get(sessionId) as number;
				let fullPath = options.fullPath ?? null;
				if (spill && fullText !== undefined) {
					written = this.writeOutput(sessionId, seq, fullText);
					fullPath = written;
				}
				this.statements.insertMessage.run(
					sessionId,
					seq,
					options.round,
					message.role,
					body,
					spill ? null : (fullText ?? null),
					fullPath,
					Date.now(),
				);
				return seq;
			});
		} catch (error) {
			// The row was rolled back: don't leave its output file behind.
			if (written) rmSync(written, { force: true });
			throw error;
		}
	}

	/** Appends an agent event to session `sessionId` and returns its seq (1 for the session's first event). */
	appendEvent(sessionId: string, event: AgentEvent): number {
		if (typeof event?.type !== "string") throw new Error("an event needs a string type");
		const body = toJson(event, "event");
		return this.write(() => {
			this.touch(sessionId);
			const seq = this.statements.nextEventSeq.get(sessionId) as number;
			this.statements.insertEvent.run(sessionId, seq, event.type, body, Date.now());
			return seq;
		});
	}

	/** Appends a ledger decision to session `sessionId` and returns its seq (1 for the session's first decision). */
	appendDecision(sessionId: string, decision: { round: number; kind: string; body: Record<string, unknown> }): number {
		checkRound(decision.round);
		if (typeof decision.kind !== "string" || decision.kind === "") throw new Error("a decision needs a kind");
		const body = toJson(decision.body, "decision body");
		return this.write(() => {
			this.touch(sessionId);
			const seq = this.statements.nextDecisionSeq.get(sessionId) as number;
			this.statements.insertDecision.run(sessionId, seq, decision.round, decision.kind, body, Date.now());
			return seq;
		});
	}

	/** Every message of the session in seq order; [] for an unknown session. */
	messages(sessionId: string): StoredMessage[] {
		return this.read(() =>
			this.statements.messages.all(sessionId).map((row) => ({
				seq: row.seq,
				round: row.round,
				message: this.parse(row.body, `message ${row.seq} of session ${sessionId}`) as Message,
				...(row.full_text !== null ? { fullText: row.full_text } : {}),
				...(row.full_path !== null ? { fullPath: row.full_path } : {}),
				createdAt: row.created_at,
			})),
		);
	}

	/** The session's events in seq order, only those whose type is in `types` when given; [] for an unknown session. */
	events(sessionId: string, options: { types?: string[] } = {}): StoredEvent[] {
		return this.read(() => {
			const rows =
				options.types === undefined
					? this.statements.events.all(sessionId)
					: this.statements.eventsOfTypes.all(sessionId, JSON.stringify(options.types));
			return rows.map((row) => ({
				seq: row.seq,
				event: this.parse(row.body, `event ${row.seq} of session ${sessionId}`) as AgentEvent,
				createdAt: row.created_at,
			}));
		});
	}

	/** The session's newest event of type `type`, if any (read without loading the others). */
	latestEvent(sessionId: string, type: string): StoredEvent | undefined {
		return this.read(() => {
			const row = this.statements.latestEventOfType.get(sessionId, type);
			if (!row) return undefined;
			return {
				seq: row.seq,
				event: this.parse(row.body, `event ${row.seq} of session ${sessionId}`) as AgentEvent,
				createdAt: row.created_at,
			};
		});
	}

	/** The session's ledger decisions in seq order; [] for an unknown session. */
	decisions(sessionId: string): StoredDecision[] {
		return this.read(() =>
			this.statements.decisions.all(sessionId).map((row) => ({
				seq: row.seq,
				round: row.round,
				kind: row.kind,
				body: this.parse(row.body, `decision ${row.seq} of session ${sessionId}`) as Record<string, unknown>,
				createdAt: row.created_at,
			})),
		);
	}

	/**
	 * Token totals over every provider request of the session: its "usage" events and the summary calls of its
	 * "compaction" events; all zero for a session without any.
	 */
	usageTotals(sessionId: string): UsageTotals {
		return this.read(() => {
			const row = this.statements.usageTotals.get(sessionId);
			return {
				input: row?.input ?? 0,
				output: row?.output ?? 0,
				cacheRead: row?.cacheRead ?? 0,
				cacheWrite: row?.cacheWrite ?? 0,
				requests: row?.requests ?? 0,
			};
		});
	}

	private selectSessions(filter: { cwd?: string; parentId?: string | null; limit?: number }): SessionRow[] {
		const conditions: string[] = [];
		const parameters: (string | number)[] = [];
		if (filter.cwd !== undefined) {
			conditions.push("cwd = ?");
			parameters.push(filter.cwd);
		}
		if (filter.parentId === null) conditions.push("parent_id IS NULL");
		else if (filter.parentId !== undefined) {
			conditions.push("parent_id = ?");
			parameters.push(filter.parentId);
		}
		const where = conditions.length ? ` WHERE ${conditions.join(" AND ")}` : "";
		const limit = filter.limit === undefined ? "" : " LIMIT ?";
		if (filter.limit !== undefined) parameters.push(filter.limit);
		return this.database
			.prepare<(string | number)[], SessionRow>(
				`SELECT ${SESSION_COLUMNS} FROM sessions${where} ORDER BY activity DESC${limit}`,
			)
			.all(...parameters);
	}

	/** Marks the session as just written to; throws when it does not exist. Call inside a write transaction. */
	private touch(sessionId: string): void {
		if (this.statements.touchSession.run(Date.now(), sessionId).changes === 0) {
			throw new Error(`no session ${sessionId}`);
		}
	}

	/** Writes an oversized tool output to its own private file and returns the file's path. */
	private writeOutput(sessionId: string, seq: number, text: string): string {
		checkSessionId(sessionId);
		const directory = join(dirname(this.path), "sessions", sessionId, "outputs");
		mkdirSync(directory, { recursive: true, mode: 0o700 });
		const file = join(directory, `${seq}.txt`);
		try {
			writeFileSync(file, text, { encoding: "utf8", mode: 0o600 });
			// A leftover file from a killed process keeps its old mode through writeFileSync: set it again.
			chmodSync(file, 0o600);
		} catch (error) {
			throw new Error(`cannot write the full tool output to ${file}: ${reasonOf(error)}`, { cause: error });
		}
		return file;
	}

	/** Runs `work` in a BEGIN IMMEDIATE transaction; SQLite failures become one-line errors naming the file. */
	private write<T>(work: () => T): T {
		return this.read(() => this.database.transaction(work).immediate());
	}

	/** Runs `work`, turning SQLite failures (locked, corrupt, I/O) into one-line errors naming the file. */
	private read<T>(work: () => T): T {
		try {
			return work();
		} catch (error) {
			if (error instanceof Database.SqliteError) {
				throw new Error(`session database ${this.path}: ${reasonOf(error)}`, { cause: error });
			}
			throw error;
		}
	}

	private parse(text: string, what: string): unknown {
		try {
			return JSON.parse(text);
		} catch (error) {
			throw new Error(`session database ${this.path}: ${what} is not valid JSON (${reasonOf(error)})`, {
				cause: error,
			});
		}
	}
}

function prepareStatements(database: Database.Database) {
	return {
		sessionExists: database.prepare<[string], 1>("SELECT 1 FROM sessions WHERE id = ?").pluck(),
		sessionById: database.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`),
		sessionsByPrefix: database.prepare<[string, number], SessionRow>(
			`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id GLOB ? ORDER BY id LIMIT ?`,
		),
		insertSession: database.prepare<
			[string, string | null, number, number, string, string, string, string, string],
			unknown
		>(
			`INSERT INTO sessions (id, parent_id, created_at, updated_at, activity, cwd, model, title, status, meta)
			 VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(activity), 0) + 1 FROM sessions), ?, ?, ?, ?, ?)`,
		),
		updateSession: database.prepare<
			[string | null, string | null, string | null, string | null, number, string],
			unknown
		>(
			`UPDATE sessions SET
				title = COALESCE(?, title),
				status = COALESCE(?, status),
				model = COALESCE(?, model),
				meta = COALESCE(?, meta),
				updated_at = ?,
				activity = (SELECT COALESCE(MAX(activity), 0) + 1 FROM sessions)
			 WHERE id = ?`,
		),
		touchSession: database.prepare<[number, string], unknown>(
			`UPDATE sessions SET updated_at = ?, activity = (SELECT COALESCE(MAX(activity), 0) + 1 FROM sessions)
			 WHERE id = ?`,
		),
		nextMessageSeq: database
			.prepare<[string], number>("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?")
			.pluck(),
		nextEventSeq: database
			.prepare<[string], number>("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = ?")
			.pluck(),
		nextDecisionSeq: database
			.prepare<[string], number>("SELECT COALESCE(MAX(seq), 0) + 1 FROM decisions WHERE session_id = ?")
			.pluck(),
		insertMessage: database.prepare<
			[string, number, number, string, string, string | null, string | null, number],
			unknown
		>(
			`INSERT INTO messages (session_id, seq, round, role, body, full_text, full_path, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		),
		insertEvent: database.prepare<[string, number, string, string, number], unknown>(
			"INSERT INTO events (session_id, seq, type, body, created_at) VALUES (?, ?, ?, ?, ?)",
		),
		insertDecision: database.prepare<[string, number, number, string, string, number], unknown>(
			"INSERT INTO decisions (session_id, seq, round, kind, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		),
		messages: database.prepare<[string], MessageRow>(
			`SELECT seq, round, body, full_text, full_path, created_at FROM messages WHERE session_id = ? ORDER BY seq`,
		),
		events: database.prepare<[string], EventRow>(
			"SELECT seq, body, created_at FROM events WHERE session_id = ? ORDER BY seq",
		),
		latestEventOfType: database.prepare<[string, string], EventRow>(
			"SELECT seq, body, created_at FROM events WHERE session_id = ? AND type = ? ORDER BY seq DESC LIMIT 1",
		),
		eventsOfTypes: database.prepare<[string, string], EventRow>(
			`SELECT seq, body, created_at FROM events
			 WHERE session_id = ? AND type IN (SELECT value FROM json_each(?)) ORDER BY seq`,
		),
		decisions: database.prepare<[string], DecisionRow>(
			"SELECT seq, round, kind, body, created_at FROM decisions WHERE session_id = ? ORDER BY seq",
		),
		usageTotals: database.prepare<[string], UsageTotals>(
			`SELECT
				COALESCE(SUM(json_extract(body, '$.usage.input')), 0) AS input,
				COALESCE(SUM(json_extract(body, '$.usage.output')), 0) AS output,
				COALESCE(SUM(json_extract(body, '$.usage.cacheRead')), 0) AS cacheRead,
				COALESCE(SUM(json_extract(body, '$.usage.cacheWrite')), 0) AS cacheWrite,
				COUNT(*) AS requests
			 FROM events WHERE session_id = ? AND type IN ('usage', 'compaction')
			   AND json_extract(body, '$.usage') IS NOT NULL`,
		),
	};
}

function toSessionInfo(row: SessionRow, path: string): SessionInfo {
	let meta: unknown;
	try {
		meta = JSON.parse(row.meta);
	} catch (error) {
		throw new Error(`session database ${path}: the meta of session ${row.id} is not valid JSON (${reasonOf(error)})`);
	}
	return {
		id: row.id,
		...(row.parent_id !== null ? { parentId: row.parent_id } : {}),
		createdAt: row.created_at,
		updatedAt: row.updated_at,
		cwd: row.cwd,
		model: row.model,
		title: row.title,
		status: row.status,
		meta: meta !== null && typeof meta === "object" && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {},
	};
}

function checkSessionId(id: string): void {
	if (typeof id !== "string" || !SESSION_ID.test(id)) {
		throw new Error(
			`invalid session id ${JSON.stringify(id)}: use 1 to 128 letters, digits, "_" or "-" (or let snowpea pick a UUID)`,
		);
	}
}

function checkRound(round: number): void {
	if (!Number.isInteger(round) || round < 0) throw new Error(`round must be a whole number ≥ 0, got ${round}`);
}

function toJson(value: unknown, what: string): string {
	try {
		const text = JSON.stringify(value);
		if (text === undefined) throw new Error("it has no JSON form");
		return text;
	} catch (error) {
		throw new Error(`cannot store the ${what}: ${reasonOf(error)}`, { cause: error });
	}
}

function reasonOf(error: unknown): string {
	const text = error instanceof Error ? error.message : String(error);
	return text.replace(/\s+/g, " ").trim();
}
