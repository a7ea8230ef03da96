import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** Directory names never entered by the search tools. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set([".git", "node_modules"]);

export interface WalkOptions {
	signal?: AbortSignal;
	/** Also yield symbolic links that point at files (links to directories are never entered). Default false. */
	fileLinks?: boolean;
	/** Deepest level to descend to: 1 = only the root's own entries. Default unlimited. */
	maxDepth?: number;
}

export interface WalkedFile {
	absolute: string;
	/** "/"-separated path from the root. */
	relative: string;
}

/**
 * Yields the regular files under `root` in name order, depth first, skipping SKIPPED_DIRECTORIES and never following
 * directory links. Unreadable directories are passed over silently. Stops early when `signal` aborts.
 */
export async function* walkFiles(root: string, options: WalkOptions = {}): AsyncGenerator<WalkedFile> {
	const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
	async function* visit(directory: string, prefix: string, depth: number): AsyncGenerator<WalkedFile> {
		if (options.signal?.aborted) return;
		let entries: Dirent[];
		try {
			entries = await readdir(directory, { withFileTypes: true });
		} catch {
			return;
		}
		entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
		for (const entry of entries) {
			if (options.signal?.aborted) return;
			const absolute = join(directory, entry.name);
			const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
			if (entry.isDirectory()) {
				if (!SKIPPED_DIRECTORIES.has(entry.name) && depth < maxDepth) yield* visit(absolute, relative, depth + 1);
			} else if (entry.isFile()) {
				yield { absolute, relative };
			} else if (entry.isSymbolicLink() && options.fileLinks) {
				const target = await stat(absolute).catch(() => undefined);
				if (target?.isFile()) yield { absolute, relative };
			}
		}
	}
	yield* visit(root, "", 1);
}
