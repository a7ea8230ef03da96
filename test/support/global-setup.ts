import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Gives the whole run one scratch directory: every test's mkdtemp (and the CLI processes they start) lands under it
 * through TMPDIR, and it is removed when the run ends, so test runs leave nothing behind in /tmp.
 */
export default function setup(): () => void {
	const root = mkdtempSync(join(tmpdir(), "snowpea-tests-"));
	process.env.TMPDIR = root;
	return () => rmSync(root, { recursive: true, force: true });
}
