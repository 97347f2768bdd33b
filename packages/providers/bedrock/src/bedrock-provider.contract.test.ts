import { describeProviderContract } from "@unforget/testing/contract";
import { startBedrockFake } from "@unforget/testing/fakes";
import { createBedrockProvider } from "./index.ts";

describeProviderContract({
  name: "bedrock",
  startFake: startBedrockFake,
  createProvider: (fake, settings) =>
    createBedrockProvider({
      region: fake.region,
      baseURL: fake.url,
      credentials: fake.credentials,
      // Only what is passed counts: a Bedrock key in this process's environment must not change the test.
      env: {},
      maxRetries: settings.maxRetries,
      initialRetryDelayMs: settings.initialRetryDelayMs,
    }),
  model: "anthropic.claude-sonnet-4-6",
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
