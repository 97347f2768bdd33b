import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: the CLI runs as a real process over whole corpus sessions on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
