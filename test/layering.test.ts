import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// Which layers each layer may import from (besides itself). Imports point one way only.
const ALLOWED: Record<string, string[]> = {
	llm: [],
	tools: ["llm"],
	context: ["llm"],
	agent: ["llm", "tools", "context"],
	session: ["llm", "tools", "context", "agent"],
	cli: ["llm", "tools", "context", "agent", "session", "bench"],
	bench: ["llm", "context"],
};

const SRC = resolve(import.meta.dirname, "../src");

function sourceFiles(directory: string): string[] {
	return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
		const path = join(directory, entry.name);
		if (entry.isDirectory()) return sourceFiles(path);
		return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
	});
}

/** The layer a file belongs to: its first folder under src/. */
function layerOf(root: string, file: string): string | undefined {
	const [first, second] = relative(root, file).split(/[\\/]/);
	return second === undefined ? undefined : first;
}

/** Every relative import target in a file (static, dynamic and re-exports). */
function importsOf(text: string): string[] {
	const found: string[] = [];
	const pattern =
		/(?:import|export)\s[^'"]*?from\s*["'](\.[^"']+)["']|import\s*\(\s*["'](\.[^"']+)["']\s*\)|import\s*["'](\.[^"']+)["']/g;
	for (const match of text.matchAll(pattern)) found.push((match[1] ?? match[2] ?? match[3]) as string);
	return found;
}

function violations(root: string): string[] {
	const problems: string[] = [];
	for (const file of sourceFiles(root)) {
		const from = layerOf(root, file);
		if (!from) continue;
		for (const target of importsOf(readFileSync(file, "utf8"))) {
			const to = layerOf(root, resolve(dirname(file), target));
			if (!to || to === from) continue;
			if (!(ALLOWED[from] ?? []).includes(to)) problems.push(`${relative(root, file)} imports ${to} (${target})`);
		}
	}
	return problems;
}

describe("layering", () => {
	it("every layer folder is known", () => {
		const folders = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory());
		for (const folder of folders) expect(Object.keys(ALLOWED)).toContain(folder.name);
	});

	it("imports point one way only", () => {
		expect(violations(SRC)).toEqual([]);
	});

	it("flags a wrong-way import, static, dynamic or re-export", () => {
		const root = mkdtempSync(join(tmpdir(), "snowpea-layers-"));
		mkdirSync(join(root, "llm"));
		mkdirSync(join(root, "agent"));
		writeFileSync(join(root, "agent", "loop.ts"), `import type { X } from "../llm/types.js";\n`);
		writeFileSync(
			join(root, "llm", "types.ts"),
			`import { a } from "../agent/loop.js";\nexport * from "../agent/loop.js";\nawait import("../agent/loop.js");\n`,
		);
		expect(violations(root)).toEqual([
			"llm/types.ts imports agent (../agent/loop.js)",
			"llm/types.ts imports agent (../agent/loop.js)",
			"llm/types.ts imports agent (../agent/loop.js)",
		]);
		rmSync(root, { recursive: true });
	});
});
