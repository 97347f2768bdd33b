import { expect, it } from "vitest";
import { type ContractContext, collect, TIME_TOOL, userText, WEATHER_TOOL } from "./contract-context.ts";

/** Round trips: the contract version, parallel tool calls, streaming equal to non-streaming, usage. */
export function describeRoundTripScenarios(contract: ContractContext): void {
  const { capabilities, model, timeout, request, lastRequestBody } = contract;
  it("declares the contract version and its provider id", () => {
    expect(contract.provider.specificationVersion).toBe("unforget-provider-v1");
    expect(contract.provider.providerId).toBe(contract.fake.providerId);
    expect(contract.provider.capabilities.nativeTokenCounting).toBe(capabilities.nativeTokenCounting);
    const limits = contract.provider.getModelLimits(model);
    expect(limits.contextWindow).toBeGreaterThan(0);
    expect(limits.maxOutputTokens).toBeGreaterThan(0);
  });

  it(
    "round trip with parallel tool calls: two tool_use blocks, results sent back, final answer",
    async () => {
      contract.fake.enqueue({
        kind: "reply",
        text: "Checking both.",
        toolCalls: [
          { id: "call_paris", name: "get_weather", input: { city: "Paris" } },
          { id: "call_rome", name: "get_time", input: { city: "Rome" } },
        ],
      });
      const first = await contract.provider.createMessage(request({ tools: [WEATHER_TOOL, TIME_TOOL] }));
      expect(first.stopReason).toBe("tool_use");
      const toolUses = first.content.filter((block) => block.type === "tool_use");
      expect(toolUses).toHaveLength(2);
      expect(toolUses.map((block) => [block.name, block.input])).toEqual([
        ["get_weather", { city: "Paris" }],
        ["get_time", { city: "Rome" }],
      ]);
      const ids = toolUses.map((block) => block.id);
      expect(new Set(ids).size).toBe(2);

      contract.fake.enqueue({ kind: "reply", text: "Paris is sunny at 21C; it is 14:05 in Rome." });
      const second = await contract.provider.createMessage(
        request({
          tools: [WEATHER_TOOL, TIME_TOOL],
          messages: [
            userText("What is the weather in Paris and in Rome?"),
            { role: "assistant", content: first.content },
            {
              role: "user",
              content: [
                { type: "tool_result", tool_use_id: ids[0] ?? "", content: "21C, sunny" },
                { type: "tool_result", tool_use_id: ids[1] ?? "", content: "14:05" },
              ],
            },
          ],
        }),
      );
      expect(second.stopReason).toBe("end_turn");
      expect(second.content).toEqual([{ type: "text", text: "Paris is sunny at 21C; it is 14:05 in Rome." }]);
      const sent = JSON.stringify(lastRequestBody());
      expect(sent).toContain("21C, sunny");
      expect(sent).toContain("14:05");
      expect(sent).toContain("get_weather");
      expect(sent).toContain("Paris");
    },
    timeout,
  );

  it(
    "streaming equals non-streaming: same content, usage and stop reason",
    async () => {
      const reply = {
        kind: "reply" as const,
        text: "Let me look that up for you.",
        ...(capabilities.thinking ? { thinking: "The user wants two cities." } : {}),
        toolCalls: [
          { id: "call_a", name: "get_weather", input: { city: "Paris", units: { temperature: "C" } } },
          { id: "call_b", name: "get_weather", input: { city: "Rome" } },
        ],
        usage: { inputTokens: 120, outputTokens: 45 },
      };
      contract.fake.enqueue(reply);
      const whole = await contract.provider.createMessage(request({ tools: [WEATHER_TOOL] }));
      contract.fake.enqueue(reply);
      const stream = contract.provider.streamMessage(request({ tools: [WEATHER_TOOL] }));
      const events = await collect(stream);
      const streamed = await stream.finalResponse();

      expect(streamed.content).toEqual(whole.content);
      expect(streamed.usage).toEqual(whole.usage);
      expect(streamed.stopReason).toBe(whole.stopReason);
      expect(streamed.stopReason).toBe("tool_use");
      expect(events[0]?.type).toBe("message_start");
      expect(events.at(-1)?.type).toBe("message_stop");
      const text = events
        .filter((event) => event.type === "text_delta")
        .map((event) => (event.type === "text_delta" ? event.text : ""))
        .join("");
      expect(text).toBe("Let me look that up for you.");
      if (capabilities.thinking) {
        expect(whole.content.some((block) => block.type === "thinking")).toBe(true);
        expect(events.some((event) => event.type === "thinking_delta")).toBe(true);
      }
    },
    timeout,
  );

  it(
    "usage is normalised: input, output, cache creation and cache read, for create and stream",
    async () => {
      const usage = {
        inputTokens: 1000,
        outputTokens: 77,
        cacheCreationInputTokens: capabilities.cacheCreationUsage ? 300 : 0,
        cacheReadInputTokens: 1800,
      };
      contract.fake.enqueue({ kind: "reply", text: "cached", usage });
      const whole = await contract.provider.createMessage(request());
      // The four totals exactly; a provider may add its own detail (cache TTL split, server passes).
      expect(whole.usage).toMatchObject(usage);
      contract.fake.enqueue({ kind: "reply", text: "cached", usage });
      const streamed = await contract.provider.streamMessage(request()).finalResponse();
      expect(streamed.usage).toMatchObject(usage);
    },
    timeout,
  );

  it(
    "default usage matches the fake's deterministic count of the request",
    async () => {
      contract.fake.enqueue({ kind: "reply", text: "counted" });
      const response = await contract.provider.createMessage(request({ system: "You are terse." }));
      const expected = contract.fake.countTokens(lastRequestBody());
      expect(
        response.usage.inputTokens +
          response.usage.cacheCreationInputTokens +
          response.usage.cacheReadInputTokens,
      ).toBe(expected);
      expect(response.usage.outputTokens).toBeGreaterThan(0);
    },
    timeout,
  );
}
