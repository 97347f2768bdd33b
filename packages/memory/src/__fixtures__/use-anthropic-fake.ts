import type { ModelProvider } from "@unforget/core";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll } from "vitest";

/** Starts the wire-faithful Anthropic fake for the test file; providers are the real SDK pointed at it. */
export function useAnthropicFake(): { fake: () => AnthropicFakeServer; provider: () => ModelProvider } {
  let server: AnthropicFakeServer | undefined;
  beforeAll(async () => {
    server = await startAnthropicFake();
  });
  afterAll(async () => {
    await server?.close();
  });
  const fake = () => {
    if (!server) throw new Error("the Anthropic fake is not started yet");
    return server;
  };
  return {
    fake,
    provider: () => createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake().url, maxRetries: 0 }),
  };
}
