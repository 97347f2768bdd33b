import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Forks: the tests start real process groups and measure a manager's memory in its own process.
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so real subprocesses (and the fsyncs of every state write) pass
    // on a loaded machine; CI on the shared 2-core machine has run at a load average of 20.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
