import { startVertexFake, type VertexFakeServer } from "@unforget/testing/fakes";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createVertexProvider } from "./index.ts";

// A file of its own: the notice is once per process, and each test file runs in a fresh one.
let fake: VertexFakeServer;
beforeAll(async () => {
  fake = await startVertexFake();
});
afterAll(async () => {
  await fake.close();
});

describe("the SDK's deprecation warning", () => {
  it("is shown once per process, in one line naming the SDK, however many clients connect", async () => {
    const warn = vi.spyOn(console, "warn");
    try {
      for (let client = 0; client < 3; client++) {
        const provider = createVertexProvider({ project: "p", baseURL: fake.url, accessToken: "t", env: {} });
        await provider.createMessage({
          model: "gemini-2.5-pro",
          maxTokens: 16,
          messages: [{ role: "user", content: "hi" }],
        });
      }
      const notices = warn.mock.calls.filter(([line]) => String(line).includes("VertexAI class"));
      expect(notices).toHaveLength(1);
      expect(notices[0]?.[0]).toMatch(
        /^unforget: @google-cloud\/vertexai says: The VertexAI class and all its dependencies are deprecated/,
      );
      expect(notices[0]?.[0]).not.toContain("\n");
    } finally {
      warn.mockRestore();
    }
  });
});
