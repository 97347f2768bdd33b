import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Forks: the tests start real process groups and measure a manager's memory in its own process.
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so real subprocesses pass on a loaded machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
