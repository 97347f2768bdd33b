import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so a loaded machine, PGlite's first start and server restarts pass.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
