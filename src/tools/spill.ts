import { createHash } from "node:crypto";
import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/**
 * Saves `text` as `output-<first 16 hex digits of its sha256>.txt` in `directory` and returns the absolute path.
 * The directory is created (recursively) with mode 0700, or set to 0700 if it exists with other modes; the file gets
 * mode 0600. Content-addressed: the name never comes from a model-supplied string, and the same text always lands in
 * the same file. Rejects when the file system refuses.
 */
export async function writeSpill(directory: string, text: string): Promise<string> {
	const folder = resolve(directory);
	await mkdir(folder, { recursive: true, mode: 0o700 });
	if (((await stat(folder)).mode & 0o777) !== 0o700) await chmod(folder, 0o700);
	const digest = createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
	const path = join(folder, `output-${digest}.txt`);
	await writeFile(path, text, { encoding: "utf8", mode: 0o600 });
	// writeFile keeps the mode of a file that already exists.
	if (((await stat(path)).mode & 0o777) !== 0o600) await chmod(path, 0o600);
	return path;
}
