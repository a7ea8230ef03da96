import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Where Debian and Ubuntu's package puts Chromium; tried when no path is configured. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";
/** Names looked up on PATH after the default path. */
const PATH_NAMES = ["chromium", "chromium-browser"];

function isExecutableFile(path: string): boolean {
	try {
		if (!statSync(path).isFile()) return false;
		accessSync(path, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/**
 * The Chromium to launch: `configured` (the `browser.executablePath` setting) when given, else /usr/bin/chromium,
 * else `chromium` or `chromium-browser` on PATH. Never downloads anything. When none is found, `error` is one line
 * naming where it looked and how to install it. Never throws.
 */
export function findChromium(
	configured?: string,
	environmentPath: string = process.env.PATH ?? "",
	defaultPath: string = DEFAULT_CHROMIUM_PATH,
): { path: string } | { error: string } {
	const hint = "install it with `apt-get install chromium` (or set browser.executablePath)";
	if (configured !== undefined && configured !== "") {
		return isExecutableFile(configured)
			? { path: configured }
			: { error: `no Chromium found at ${configured}; ${hint}` };
	}
	if (isExecutableFile(defaultPath)) return { path: defaultPath };
	for (const directory of environmentPath.split(delimiter)) {
		if (directory === "") continue;
		for (const name of PATH_NAMES) {
			const candidate = join(directory, name);
			if (isExecutableFile(candidate)) return { path: candidate };
		}
	}
	return { error: `no Chromium found at ${defaultPath} or on PATH (${PATH_NAMES.join(", ")}); ${hint}` };
}
