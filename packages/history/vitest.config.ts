import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    pool: "threads",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so property tests and real subprocesses pass on a loaded machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
