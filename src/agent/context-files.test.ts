import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	type ContextFile,
	ContextFiles,
	clipContextFile,
	contextFileCaps,
	discoverContextFiles,
	isInstructionFile,
	type NestedContextFile,
	renderContextBlock,
} from "./context-files.js";

/** A fresh directory outside any git repository. */
function scratch(): string {
	return realpathSync(mkdtempSync(join(tmpdir(), "snowpea-context-files-")));
}

/** A fresh git repository (made with `git init`). */
function repository(at: string = scratch()): string {
	mkdirSync(at, { recursive: true });
	execFileSync("git", ["init", "-q", at]);
	return at;
}

function write(root: string, path: string, text: string): void {
	mkdirSync(dirname(join(root, path)), { recursive: true });
	writeFileSync(join(root, path), text);
}

const labels = (files: readonly { label: string }[]) => files.map((file) => file.label);

describe("contextFileCaps", () => {
	it("derives the per-file cap from the window: 8,000 at 32K, 48,000 at 200K, 500,000 at most", () => {
		expect(contextFileCaps(32_000).perFile).toBe(8_000);
		expect(contextFileCaps(32_768).perFile).toBe(8_000);
		expect(contextFileCaps(40_000).perFile).toBe(20_000);
		expect(contextFileCaps(128_000).perFile).toBe(30_720);
		expect(contextFileCaps(200_000).perFile).toBe(48_000);
		expect(contextFileCaps(1_000_000).perFile).toBe(240_000);
		expect(contextFileCaps(4_000_000).perFile).toBe(500_000);
	});

	it("derives the total from the window, clamped to 12,000–120,000", () => {
		expect(contextFileCaps(8_000).total).toBe(12_000);
		expect(contextFileCaps(40_000).total).toBe(16_000);
		expect(contextFileCaps(200_000).total).toBe(80_000);
		expect(contextFileCaps(1_000_000).total).toBe(120_000);
	});

	it("uses 20,000 per file and 12,000 in all when the window is unknown", () => {
		expect(contextFileCaps(undefined)).toEqual({ perFile: 20_000, total: 12_000 });
		expect(contextFileCaps(0)).toEqual({ perFile: 20_000, total: 12_000 });
		expect(contextFileCaps(Number.NaN)).toEqual({ perFile: 20_000, total: 12_000 });
	});

	it("lets positive overrides win", () => {
		expect(contextFileCaps(200_000, { perFile: 1_000, total: 5_000 })).toEqual({ perFile: 1_000, total: 5_000 });
		expect(contextFileCaps(undefined, { total: 300_000 })).toEqual({ perFile: 20_000, total: 300_000 });
		expect(contextFileCaps(200_000, { perFile: 0 })).toEqual({ perFile: 48_000, total: 80_000 });
	});
});

describe("clipContextFile", () => {
	it("keeps 70 % and 20 % of the cap around a marker naming what was left out and how to read it", () => {
		const content = "0123456789".repeat(10);
		expect(clipContextFile(content, 50, "pkg/AGENTS.md")).toBe(
			`${content.slice(0, 35)}\n[… 55 characters left out — read_file pkg/AGENTS.md for the rest]\n${content.slice(90)}`,
		);
	});

	it("leaves a file that fits alone", () => {
		expect(clipContextFile("short", 5, "AGENTS.md")).toBe("short");
	});
});

describe("discoverContextFiles", () => {
	it("loads the AGENTS chain from the git root down to the working directory, labelled relative to it", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "packages/api/AGENTS.md", "api rules");
		write(root, "packages/api/src/index.ts", "");
		const found = discoverContextFiles(join(root, "packages/api/src"));
		expect(found.root).toBe(root);
		expect(found.files.map(({ label, depth, content }) => ({ label, depth, content }))).toEqual([
			{ label: "../../../AGENTS.md", depth: 0, content: "root rules" },
			{ label: "../AGENTS.md", depth: 2, content: "api rules" },
		]);
		expect(found.files[1]?.path).toBe(join(root, "packages/api/AGENTS.md"));
	});

	it("takes AGENTS.override.md instead of AGENTS.md in the same directory", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "app/AGENTS.md", "plain app rules");
		write(root, "app/AGENTS.override.md", "override app rules");
		const found = discoverContextFiles(join(root, "app"));
		expect(labels(found.files)).toEqual(["../AGENTS.md", "AGENTS.override.md"]);
		expect(found.files.map((file) => file.content)).not.toContain("plain app rules");
	});

	it("loads identical content along the chain once", () => {
		const root = repository();
		write(root, "AGENTS.md", "same rules\n");
		write(root, "app/AGENTS.md", "same rules");
		expect(labels(discoverContextFiles(join(root, "app")).files)).toEqual(["../AGENTS.md"]);
	});

	it("never looks above the git root", () => {
		const outside = scratch();
		write(outside, "AGENTS.md", "outer rules");
		write(outside, ".snowpea/instructions.md", "outer snowpea rules");
		const root = repository(join(outside, "project"));
		write(root, "CLAUDE.md", "project rules");
		const found = discoverContextFiles(root);
		expect(found.root).toBe(root);
		expect(found.files.map((file) => [file.label, file.content])).toEqual([["CLAUDE.md", "project rules"]]);
	});

	it("without a git root only the working directory counts", () => {
		const outside = scratch();
		write(outside, "AGENTS.md", "outer rules");
		write(outside, "work/AGENTS.md", "work rules");
		write(outside, "work/sub/AGENTS.md", "nested rules");
		const found = discoverContextFiles(join(outside, "work"));
		expect(found.root).toBeUndefined();
		expect(found.files.map((file) => [file.label, file.content])).toEqual([["AGENTS.md", "work rules"]]);
		expect(found.nested).toEqual([]);
	});

	it("prefers the nearest .snowpea/instructions.md over every other kind", () => {
		const root = repository();
		write(root, "AGENTS.md", "agents rules");
		write(root, ".snowpea/instructions.md", "root snowpea rules");
		write(root, "a/.snowpea/instructions.md", "a snowpea rules");
		write(root, "a/b/CLAUDE.md", "claude rules");
		const found = discoverContextFiles(join(root, "a/b"));
		expect(found.files.map((file) => [file.label, file.depth, file.content])).toEqual([
			["../.snowpea/instructions.md", 1, "a snowpea rules"],
		]);
	});

	it("falls back to CLAUDE.md when no AGENTS file (or only an empty one) exists", () => {
		const root = repository();
		write(root, "AGENTS.md", "  \n");
		write(root, "CLAUDE.md", "claude rules");
		write(root, ".cursorrules", "cursor rules");
		expect(labels(discoverContextFiles(root).files)).toEqual(["CLAUDE.md"]);
	});

	it("falls back to .cursorrules and .cursor/rules/*.mdc, sorted", () => {
		const root = repository();
		write(root, ".cursorrules", "legacy rules");
		write(root, ".cursor/rules/b-style.mdc", "style rules");
		write(root, ".cursor/rules/a-tests.mdc", "test rules");
		write(root, ".cursor/rules/notes.txt", "not a rule");
		expect(labels(discoverContextFiles(root).files)).toEqual([
			".cursorrules",
			".cursor/rules/a-tests.mdc",
			".cursor/rules/b-style.mdc",
		]);
	});

	it("finds nested files breadth first down to depth 4, skipping build, dependency, hidden and virtualenv folders", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "a/b/AGENTS.md", "a/b rules");
		write(root, "z/AGENTS.md", "z rules");
		write(root, "a/b/c/d/AGENTS.md", "depth four rules");
		write(root, "a/b/c/d/e/AGENTS.md", "depth five rules");
		write(root, "m/CLAUDE.md", "m rules");
		write(root, "copy/AGENTS.md", "root rules");
		for (const skipped of ["node_modules/pkg", "dist", "build", "venv", ".hidden", "tools/.cache"]) {
			write(root, `${skipped}/AGENTS.md`, `${skipped} rules`);
		}
		write(root, "pyenv/pyvenv.cfg", "home = /usr/bin");
		write(root, "pyenv/AGENTS.md", "virtualenv rules");
		const found = discoverContextFiles(root);
		expect(labels(found.nested)).toEqual(["m/CLAUDE.md", "z/AGENTS.md", "a/b/AGENTS.md", "a/b/c/d/AGENTS.md"]);
		expect(found.nested[1]).toEqual({
			path: join(root, "z/AGENTS.md"),
			label: "z/AGENTS.md",
			directory: join(root, "z"),
			content: "z rules",
		});
		expect(discoverContextFiles(root, { nested: false }).nested).toEqual([]);
	});

	it("lists at most 40 nested files", () => {
		const root = repository();
		for (let index = 0; index < 45; index++) {
			write(root, `d${String(index).padStart(2, "0")}/AGENTS.md`, `rules ${index}`);
		}
		const nested = discoverContextFiles(root).nested;
		expect(nested).toHaveLength(40);
		expect(nested.at(-1)?.label).toBe("d39/AGENTS.md");
	});
});

const file = (label: string, depth: number, content: string): ContextFile => ({
	path: `/project/${label}`,
	label,
	depth,
	content,
});
const nestedFile = (label: string, content: string): NestedContextFile => ({
	path: `/project/${label}`,
	label,
	directory: dirname(`/project/${label}`),
	content,
});

describe("renderContextBlock", () => {
	it("renders each file under its label in the Project instructions block", () => {
		const block = renderContextBlock(
			[file("../AGENTS.md", 0, "root rules"), file("AGENTS.md", 1, "app rules")],
			{ perFile: 1_000, total: 5_000 },
			{ nested: [], lean: false },
		);
		expect(block.text.startsWith("# Project instructions\n\n")).toBe(true);
		expect(block.text).toContain("## ../AGENTS.md\n\nroot rules\n\n## AGENTS.md\n\napp rules");
		expect(block.text).not.toContain("Note:");
		expect(block.cut).toEqual([]);
		expect(block.loaded).toEqual(["../AGENTS.md", "AGENTS.md"]);
	});

	it("is empty when there are no files", () => {
		expect(renderContextBlock([], { perFile: 1_000, total: 5_000 }, { nested: [], lean: false })).toEqual({
			text: "",
			cut: [],
			loaded: [],
		});
	});

	it("clips an over-long file and says which setting raises the per-file limit", () => {
		const long = "x".repeat(700) + "y".repeat(300);
		const block = renderContextBlock(
			[file("AGENTS.md", 0, long)],
			{ perFile: 500, total: 5_000 },
			{ nested: [], lean: false },
		);
		expect(block.text).toContain(
			`## AGENTS.md\n\n${"x".repeat(350)}\n[… 550 characters left out — read_file AGENTS.md for the rest]\n${"y".repeat(100)}`,
		);
		expect(block.text).toContain("agent.contextFileMaxChars");
		expect(block.cut).toEqual(["AGENTS.md"]);
	});

	it("cuts the deepest files first to fit the total and keeps the root file whole", () => {
		const root = `root:${"r".repeat(2_995)}`;
		const middle = `middle:${"m".repeat(2_993)}`;
		const deep = `deep:${"d".repeat(2_995)}`;
		const files = [file("../../AGENTS.md", 0, root), file("../AGENTS.md", 1, middle), file("AGENTS.md", 2, deep)];

		const slightly = renderContextBlock(files, { perFile: 10_000, total: 7_000 }, { nested: [], lean: false });
		expect(slightly.text).toContain(`## ../../AGENTS.md\n\n${root}\n\n`);
		expect(slightly.text).toContain(`## ../AGENTS.md\n\n${middle}\n\n`);
		expect(slightly.text).toMatch(
			/## AGENTS\.md\n\ndeep:d+\n\[… \d+ characters left out — read_file AGENTS\.md for the rest\]\nd+/,
		);
		expect(slightly.cut).toEqual(["AGENTS.md"]);
		const shownDeep = slightly.text.slice(slightly.text.indexOf("## AGENTS.md\n\n") + 14).split("\n\nNote:")[0] ?? "";
		expect(root.length + middle.length + shownDeep.length).toBeLessThanOrEqual(7_000);

		const hard = renderContextBlock(files, { perFile: 10_000, total: 4_000 }, { nested: [], lean: false });
		expect(hard.text).toContain(`## ../../AGENTS.md\n\n${root}\n\n`);
		expect(hard.text).toContain("## AGENTS.md\n\n[… 3000 characters left out — read_file AGENTS.md for the rest]");
		expect(hard.text).toContain("## ../AGENTS.md\n\nmiddle:");
		expect(hard.text).not.toContain(middle);
		expect(hard.cut).toEqual(["../AGENTS.md", "AGENTS.md"]);
		expect(hard.loaded).toEqual(["../../AGENTS.md", "../AGENTS.md"]);
		expect(hard.text).toContain(
			"Note: AGENTS.md was cut to fit the 4000-character limit for all project instructions; raise agent.contextFilesMaxChars",
		);
	});

	it("keeps the root file whole even when it alone exceeds the total", () => {
		const root = "r".repeat(5_000);
		const block = renderContextBlock(
			[file("AGENTS.md", 0, root), file("sub/AGENTS.md", 1, "s".repeat(1_000))],
			{ perFile: 10_000, total: 1_000 },
			{ nested: [], lean: false },
		);
		expect(block.text).toContain(`## AGENTS.md\n\n${root}\n\n`);
		expect(block.text).toContain(
			"## sub/AGENTS.md\n\n[… 1000 characters left out — read_file sub/AGENTS.md for the rest]",
		);
	});

	it("loads nested files in full sessions while the total allows and lists the rest", () => {
		const nested = [nestedFile("a/AGENTS.md", "a".repeat(300)), nestedFile("b/AGENTS.md", "b".repeat(900))];
		const block = renderContextBlock(
			[file("AGENTS.md", 0, "root rules")],
			{ perFile: 10_000, total: 1_000 },
			{
				nested,
				lean: false,
			},
		);
		expect(block.text).toContain(`## a/AGENTS.md\n\n${"a".repeat(300)}`);
		expect(block.text).not.toContain("b".repeat(900));
		expect(block.text).toContain("Nested instruction files not shown here");
		expect(block.text).toMatch(/not shown here \([^)]*\): b\/AGENTS\.md/);
		expect(block.text).toContain("1 nested instruction file(s) did not fit the 1000-character limit");
		expect(block.cut).toEqual(["b/AGENTS.md"]);
		expect(block.loaded).toEqual(["AGENTS.md", "a/AGENTS.md"]);
	});

	it("only lists nested files in lean mode", () => {
		const nested = [nestedFile("a/AGENTS.md", "a rules"), nestedFile("b/AGENTS.md", "b rules")];
		const block = renderContextBlock(
			[file("AGENTS.md", 0, "root rules")],
			{ perFile: 10_000, total: 100_000 },
			{
				nested,
				lean: true,
			},
		);
		expect(block.text).toContain("## AGENTS.md\n\nroot rules");
		expect(block.text).not.toContain("a rules");
		expect(block.text).toMatch(/: a\/AGENTS\.md, b\/AGENTS\.md$/);
		expect(block.cut).toEqual([]);
		expect(block.loaded).toEqual(["AGENTS.md"]);
	});

	it("renders the same bytes for the same input", () => {
		const input = [file("AGENTS.md", 0, "z".repeat(3_000)), file("x/AGENTS.md", 1, "q".repeat(3_000))];
		const caps = { perFile: 2_000, total: 3_000 };
		const options = { nested: [nestedFile("n/AGENTS.md", "n rules")], lean: false };
		expect(renderContextBlock(input, caps, options)).toEqual(renderContextBlock(input, caps, options));
	});
});

describe("isInstructionFile", () => {
	it("recognises every kind of instruction file at any depth", () => {
		for (const path of [
			"AGENTS.md",
			"pkg/deep/AGENTS.override.md",
			"/abs/CLAUDE.md",
			"agents.md",
			".cursorrules",
			"sub/.cursor/rules/style.mdc",
			"a/.snowpea/instructions.md",
		]) {
			expect(isInstructionFile(path), path).toBe(true);
		}
		for (const path of ["README.md", "docs/instructions.md", "rules/style.mdc", "src/agents.ts"]) {
			expect(isInstructionFile(path), path).toBe(false);
		}
	});
});

describe("ContextFiles", () => {
	it("returns the same block until invalidated after an instruction file is written", () => {
		const root = repository();
		write(root, "AGENTS.md", "first rules");
		const files = new ContextFiles({ cwd: root, caps: contextFileCaps(200_000) });
		const first = files.block();
		expect(first).toContain("first rules");
		expect(files.block()).toBe(first);

		write(root, "AGENTS.md", "second rules");
		expect(files.block()).toBe(first);
		expect(files.isInstructionFile("AGENTS.md")).toBe(true);
		expect(files.isInstructionFile(join(root, "src/main.ts"))).toBe(false);
		files.invalidate();
		expect(files.block()).toContain("second rules");
		expect(files.block()).not.toContain("first rules");
	});

	it("drops the block and attaches nothing when context files are ignored", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "pkg/AGENTS.md", "pkg rules");
		const files = new ContextFiles({ cwd: root, caps: contextFileCaps(200_000), ignore: true });
		expect(files.block()).toBe("");
		expect(files.onToolTouched(["pkg/index.ts"], true)).toBeUndefined();
	});

	it("attaches a nested file once per session when a tool touches its directory, never on a failed call", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "pkg/AGENTS.md", "pkg rules");
		write(root, "pkg/src/index.ts", "");
		const files = new ContextFiles({ cwd: root, caps: contextFileCaps(200_000), lean: true });
		expect(files.block()).not.toContain("pkg rules");
		expect(files.block()).toContain("pkg/AGENTS.md");

		expect(files.onToolTouched(["pkg/src/index.ts"], false)).toBeUndefined();
		const attached = files.onToolTouched(["pkg/src/index.ts"], true);
		expect(attached).toContain("pkg rules");
		expect(attached).toContain("pkg/AGENTS.md");
		expect(files.onToolTouched(["pkg/src/index.ts"], true)).toBeUndefined();
		expect(files.onToolTouched([join(root, "pkg")], true)).toBeUndefined();
	});

	it("attaches every instruction file between the working directory and the touched path, outermost first", () => {
		const root = repository();
		write(root, "a/AGENTS.md", "a rules");
		write(root, "a/b/AGENTS.md", "a/b rules");
		const files = new ContextFiles({ cwd: root, caps: contextFileCaps(200_000), lean: true });
		const attached = files.onToolTouched(["a/b/c/new-file.ts"], true) ?? "";
		expect(attached.indexOf("a rules")).toBeGreaterThanOrEqual(0);
		expect(attached.indexOf("a rules")).toBeLessThan(attached.indexOf("a/b rules"));
	});

	it("attaches nothing for files already in the block, outside the working directory or under skipped folders", () => {
		const root = repository();
		write(root, "AGENTS.md", "root rules");
		write(root, "pkg/AGENTS.md", "pkg rules");
		write(root, "node_modules/dep/AGENTS.md", "dependency rules");
		write(root, "copy/AGENTS.md", "root rules");
		const files = new ContextFiles({ cwd: join(root, "pkg"), caps: contextFileCaps(200_000) });
		expect(files.block()).toContain("pkg rules");
		expect(files.onToolTouched(["../node_modules/dep/index.js"], true)).toBeUndefined();

		const full = new ContextFiles({ cwd: root, caps: contextFileCaps(200_000) });
		expect(full.block()).toContain("## pkg/AGENTS.md\n\npkg rules");
		expect(full.onToolTouched(["pkg/index.ts", "node_modules/dep/index.js", "copy/x.ts", "/elsewhere/y"], true)).toBe(
			undefined,
		);
	});

	it("counts a touched instruction file as seen and clips attachments with the per-file marker", () => {
		const root = repository();
		write(root, "seen/AGENTS.md", "seen rules");
		write(root, "long/AGENTS.md", "l".repeat(30_000));
		const files = new ContextFiles({ cwd: root, caps: { perFile: 1_000, total: 12_000 }, lean: true });
		expect(files.onToolTouched(["seen/AGENTS.md"], true)).toBeUndefined();
		const attached = files.onToolTouched(["long/file.ts"], true) ?? "";
		expect(attached).toContain("[… 29100 characters left out — read_file long/AGENTS.md for the rest]");
		expect(attached.length).toBeLessThan(1_300);
	});
});
