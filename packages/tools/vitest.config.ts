import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Forks: the Bash tests start real process groups, and the Grep tests start worker threads.
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so real subprocesses pass on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
