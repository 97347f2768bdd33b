import { describeProviderContract } from "@unforget/testing/contract";
import { startBedrockFake } from "@unforget/testing/fakes";
import { beforeAll } from "vitest";
import { createBedrockProvider } from "./index.ts";

beforeAll(() => {
  // The SDK prefers this over explicit credentials; the fake accepts both, but the test must not depend on it.
  delete process.env.AWS_BEARER_TOKEN_BEDROCK;
});

describeProviderContract({
  name: "bedrock",
  startFake: startBedrockFake,
  createProvider: (fake, settings) =>
    createBedrockProvider({
      region: fake.region,
      endpoint: fake.url,
      credentials: fake.credentials,
      maxRetries: settings.maxRetries,
      initialRetryDelayMs: settings.initialRetryDelayMs,
    }),
  model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
  capabilities: {
    nativeTokenCounting: true,
    unsupportedCountingModel: "amazon.nova-pro-v1:0",
    cacheCreationUsage: true,
    genericPromptTooLong: true,
    contextWindowExceededStop: true,
    midStreamPromptTooLong: true,
    requestTooLarge: false,
    thinking: true,
    abortClosesConnection: true,
    unknownBlocks: {
      replyBlock: { futureBlock: { detail: "kept verbatim", count: 2 } },
      original: { type: "futureBlock", futureBlock: { detail: "kept verbatim", count: 2 } },
      sentUnchanged: false,
    },
  },
});
