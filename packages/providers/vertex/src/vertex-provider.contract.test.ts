import { describeProviderContract } from "@unforget/testing/contract";
import { startVertexFake, type VertexFakeServer } from "@unforget/testing/fakes";
import { createVertexProvider } from "./vertex-provider.ts";

const CODE_PART = { executableCode: { language: "PYTHON", code: "print(6 * 7)" } };

describeProviderContract<VertexFakeServer>({
  name: "vertex",
  startFake: (options) => startVertexFake(options),
  createProvider: (fake, settings) =>
    createVertexProvider({
      project: "unforget-test",
      location: "us-central1",
      baseURL: fake.url,
      accessToken: "fake-token",
      maxRetries: settings.maxRetries,
      initialRetryDelayMs: settings.initialRetryDelayMs,
      env: {},
    }),
  model: "gemini-2.5-pro",
  capabilities: {
    nativeTokenCounting: true,
    cacheCreationUsage: false,
    genericPromptTooLong: false,
    contextWindowExceededStop: false,
    midStreamPromptTooLong: true,
    requestTooLarge: true,
    thinking: true,
    // @google-cloud/vertexai takes no AbortSignal: an aborted request is abandoned, not cancelled (decision 0003).
    abortClosesConnection: false,
    // Gemini rejects unknown fields, so a preserved part goes back as the bare part, not as `original`.
    unknownBlocks: {
      replyBlock: CODE_PART,
      original: { type: "vertex_part", part: CODE_PART },
      sentUnchanged: false,
    },
  },
});
