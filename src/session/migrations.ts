import type { Database } from "better-sqlite3";

/** One schema step. `version` is the `PRAGMA user_version` the database has once `up` has run. */
export interface Migration {
	version: number;
	description: string;
	up(database: Database): void;
}

// Version 1: the session tables. `activity` is a database-wide counter bumped whenever a session is created or
// written to (alongside updated_at, in milliseconds): "newest first" orders by it, so two writes in the same
// millisecond or a clock step backwards cannot reorder sessions. Transcript rows are append-only: triggers refuse
// any UPDATE or DELETE on messages, events and decisions, so the contract holds even against a careless caller.
const APPEND_ONLY_TABLES = ["messages", "events", "decisions"] as const;

const SCHEMA_V1 = `
CREATE TABLE sessions (
	id TEXT PRIMARY KEY,
	parent_id TEXT NULL REFERENCES sessions(id),
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	activity INTEGER NOT NULL,
	cwd TEXT NOT NULL,
	model TEXT NOT NULL,
	title TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL DEFAULT 'active',
	meta TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_by_activity ON sessions(activity);
CREATE INDEX sessions_by_cwd ON sessions(cwd, activity);
CREATE INDEX sessions_by_parent ON sessions(parent_id, activity);

CREATE TABLE messages (
	session_id TEXT NOT NULL REFERENCES sessions(id),
	seq INTEGER NOT NULL,
	round INTEGER NOT NULL,
	role TEXT NOT NULL,
	body TEXT NOT NULL,
	full_text TEXT NULL,
	full_path TEXT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE events (
	session_id TEXT NOT NULL REFERENCES sessions(id),
	seq INTEGER NOT NULL,
	type TEXT NOT NULL,
	body TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX events_by_type ON events(session_id, type, seq);

CREATE TABLE decisions (
	session_id TEXT NOT NULL REFERENCES sessions(id),
	seq INTEGER NOT NULL,
	round INTEGER NOT NULL,
	kind TEXT NOT NULL,
	body TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

${APPEND_ONLY_TABLES.map(
	(table) => `
CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table}
BEGIN SELECT RAISE(ABORT, '${table} are append-only: rows are never updated'); END;
CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table}
BEGIN SELECT RAISE(ABORT, '${table} are append-only: rows are never deleted'); END;`,
).join("\n")}
`;

/** Every schema step, in order; versions are 1, 2, 3, … with no gaps. Append new steps, never edit old ones. */
export const MIGRATIONS: readonly Migration[] = [
	{
		version: 1,
		description: "sessions, messages, events and decisions",
		up(database) {
			database.exec(SCHEMA_V1);
		},
	},
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings `database` up to the last version in `migrations`.
 * Runs inside one `BEGIN IMMEDIATE` transaction, so a failing step leaves the file exactly as it was and two
 * processes opening a fresh file at once apply each step once. Returns the version the database now has.
 * Throws an `Error` naming `path` when the database is newer than `migrations` knows (written by a newer snowpea),
 * or when a step fails.
 */
export function migrate(database: Database, path: string, migrations: readonly Migration[] = MIGRATIONS): number {
	migrations.forEach((migration, index) => {
		if (migration.version !== index + 1) {
			throw new Error(`schema migrations are out of order: step ${index + 1} has version ${migration.version}`);
		}
	});
	const latest = migrations.length;
	const run = database.transaction((): number => {
		const current = userVersion(database);
		if (current > latest) {
			throw new Error(
				`${path} has schema version ${current}, but this snowpea only knows versions up to ${latest}: ` +
					"it was written by a newer snowpea — upgrade snowpea to open it",
			);
		}
		for (const migration of migrations.slice(current)) {
			try {
				migration.up(database);
			} catch (error) {
				const reason = error instanceof Error ? error.message : String(error);
				throw new Error(`${path}: schema migration ${migration.version} (${migration.description}) failed: ${reason}`, {
					cause: error,
				});
			}
			database.pragma(`user_version = ${migration.version}`);
		}
		return Math.max(current, latest);
	});
	return run.immediate();
}

/** The database's `PRAGMA user_version`. */
export function userVersion(database: Database): number {
	return Number(database.pragma("user_version", { simple: true }));
}
