import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    globalSetup: ["test/support/global-temp.ts"],
    setupFiles: ["test/support/isolated-home.ts"],
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
