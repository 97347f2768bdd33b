import { defineConfig } from "vitest/config";

// The evaluation suite: the tests that read the third-party corpus (`evaluationCorpus()` from
// @unforget/testing/corpus: ../shared/corpus beside the repository, or UNFORGET_CORPUS_DIR). Run by `pnpm eval`;
// a missing corpus fails it, it never skips.
export default defineConfig({
  test: {
    include: ["src/**/*.eval.test.ts"],
    pool: "threads",
    maxWorkers: 2,
    // Behaviour, not speed: whole corpus sessions on a loaded machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
