import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so a loaded machine, PGlite's first start and server restarts pass
    // (one PGlite start took 19 s at a load average of 27 on 2 cores; a test that starts it twice needs more
    // than 60 s there). As memory-postgres and tasks-postgres.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
