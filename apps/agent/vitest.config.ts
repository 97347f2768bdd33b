import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    // The evaluation suite (`pnpm eval`, vitest.eval.config.ts) reads the third-party corpus: not a unit test.
    exclude: [...configDefaults.exclude, "**/*.eval.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: the CLI runs as a real process over whole corpus sessions on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
