import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** The absolute path a tool argument names: `~` is the user's home, relative paths resolve against `cwd`. */
export function resolvePath(cwd: string, path: string): string {
	if (path === "~") return homedir();
	if (path.startsWith("~/")) return join(homedir(), path.slice(2));
	return resolve(cwd, path);
}

/** How a path is shown to the model: relative to `cwd` when inside it ("." for cwd itself), else absolute. */
export function showPath(cwd: string, absolute: string): string {
	const inside = relative(cwd, absolute);
	if (inside === "") return ".";
	if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return absolute;
	return inside;
}
