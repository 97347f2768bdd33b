import { writeVertexFakeCaCertificate } from "@unforget/testing/fakes";
import { defineConfig } from "vitest/config";

// @google-cloud/vertexai always connects with https://, so the Vertex fake serves TLS with a test-only
// certificate and the test processes trust it through NODE_EXTRA_CA_CERTS. Node reads that variable only
// at start-up, hence `pool: "forks"` (fresh processes that receive `test.env`) rather than worker threads.
const caFile = writeVertexFakeCaCertificate();

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    // Behaviour, not speed: generous limits so property tests and real subprocesses pass on a loaded machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { NODE_EXTRA_CA_CERTS: caFile },
    // The SDK prints a deprecation notice on every `new VertexAI()` (see docs/decisions/0003); only that
    // exact notice is dropped, every other console output stays.
    onConsoleLog(log) {
      return !log.includes("The VertexAI class and all its dependencies are deprecated");
    },
  },
});
