import { describeProviderContract } from "@unforget/testing/contract";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { createAnthropicProvider } from "./anthropic-provider.ts";

describeProviderContract({
  name: "anthropic",
  startFake: startAnthropicFake,
  createProvider: (fake, settings) =>
    createAnthropicProvider({
      apiKey: "sk-ant-test",
      baseURL: fake.url,
      maxRetries: settings.maxRetries,
      initialRetryDelayMs: settings.initialRetryDelayMs,
    }),
  model: "claude-sonnet-4-6",
  capabilities: {
    nativeTokenCounting: true,
    cacheCreationUsage: true,
    genericPromptTooLong: true,
    contextWindowExceededStop: true,
    midStreamPromptTooLong: true,
    requestTooLarge: true,
    thinking: true,
    abortClosesConnection: true,
    unknownBlocks: {
      replyBlock: {
        type: "server_tool_use",
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "paris weather" },
      },
      original: {
        type: "server_tool_use",
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "paris weather" },
      },
      sentUnchanged: true,
    },
  },
});
