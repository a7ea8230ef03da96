import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["src/**/*.test.ts", "test/**/*.test.ts"],
		testTimeout: 30_000,
		hookTimeout: 30_000,
		pool: "forks",
		// End-to-end tests drive real processes (Chromium, tmux, CLI children) on a 2-core machine: a test that fails
		// is run once more, so a scheduling hiccup does not hide the result; a real failure fails twice.
		retry: 1,
		reporters: ["default", "./test/support/summary-reporter.ts"],
		globalSetup: ["./test/support/global-setup.ts"],
	},
});
