import { expect, it } from "vitest";
import { type ContractContext, userText, WEATHER_TOOL } from "./contract-context.ts";

/** Counting: native where the provider has it, the heuristic wherever it cannot count, never a throw. */
export function describeTokenCountingScenarios(contract: ContractContext): void {
  const { capabilities, model, timeout, request, lastRequestBody, withProvider } = contract;
  it.runIf(capabilities.nativeTokenCounting)(
    "countTokens is native and equals the fake's count of the counting request",
    async () => {
      const counted = await contract.provider.countTokens({
        model,
        system: "You are terse.",
        tools: [WEATHER_TOOL],
        messages: [
          userText("Count me, please."),
          { role: "assistant", content: [{ type: "text", text: "Sure." }] },
          userText("Thanks"),
        ],
      });
      expect(counted.method).toBe("native");
      expect(counted.inputTokens).toBe(contract.fake.countTokens(lastRequestBody()));
      expect(counted.inputTokens).toBeGreaterThan(0);

      // A pre-flight count never consumes a reply scripted for the model call that follows it.
      contract.fake.enqueue({ kind: "reply", text: "after the count" });
      await contract.provider.countTokens({ model, messages: [userText("Count me, please.")] });
      const response = await contract.provider.createMessage(request());
      expect(response.content).toEqual([{ type: "text", text: "after the count" }]);
    },
    timeout,
  );

  it(
    "countTokens falls back to the heuristic when the native endpoint fails, and never throws",
    async () => {
      const noRetries = withProvider({ maxRetries: 0 });
      contract.fake.enqueue({ kind: "error", error: "server_error" });
      const counted = await noRetries.countTokens({ model, messages: [userText("Count me, please.")] });
      expect(counted.method).toBe("heuristic");
      expect(counted.inputTokens).toBeGreaterThan(0);
      if (capabilities.nativeTokenCounting) expect(counted.fallbackReason).toBeTruthy();
    },
    timeout,
  );

  it.runIf(capabilities.unsupportedCountingModel !== undefined)(
    "countTokens uses the heuristic for a model without native counting",
    async () => {
      const counted = await contract.provider.countTokens({
        model: capabilities.unsupportedCountingModel ?? model,
        messages: [userText("Count me, please.")],
      });
      expect(counted.method).toBe("heuristic");
      expect(counted.inputTokens).toBeGreaterThan(0);
    },
    timeout,
  );
}
