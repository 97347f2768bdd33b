import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The evaluation suite (`pnpm eval`, vitest.eval.config.ts) reads the third-party corpus: not a unit test.
    exclude: [...configDefaults.exclude, "**/*.eval.test.ts"],
    pool: "threads",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so property tests and real subprocesses pass on a loaded machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
