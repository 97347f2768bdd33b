import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Forks: the tests run workers as child processes, pause and kill them, and restart the server.
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits for real processes and a real server on a loaded machine.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
