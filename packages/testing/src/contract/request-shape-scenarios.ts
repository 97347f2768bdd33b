import { InvalidMessageError, type ModelRequest } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { type ContractContext, captureError, userText } from "./contract-context.ts";

/**
 * The shorthand every other SDK accepts (a string as a message's content, as `RequestMessage` types it)
 * works; and in requests from plain JavaScript, where nothing checked the types, a key the contract does not
 * have (`max_tokens`) is refused with a typed error naming the right one, instead of being dropped in silence.
 */
export function describeRequestShapeScenarios(contract: ContractContext): void {
  const { timeout, model } = contract;

  describe("request shapes", () => {
    it(
      "a string as a message's content is text, in create, stream and count",
      async () => {
        const plain: ModelRequest = {
          model,
          maxTokens: 64,
          messages: [
            { role: "user", content: "What is the weather in Paris?" },
            { role: "assistant", content: "Sunny." },
            { role: "user", content: "And in Rome?" },
          ],
        };
        contract.fake.enqueue({ kind: "reply", text: "Also sunny." });
        const response = await contract.provider.createMessage(plain);
        expect(response.content).toEqual([{ type: "text", text: "Also sunny." }]);
        const sent = JSON.stringify(contract.lastRequestBody());
        expect(sent).toContain("What is the weather in Paris?");
        expect(sent).toContain("And in Rome?");

        contract.fake.enqueue({ kind: "reply", text: "Streamed." });
        const streamed = await contract.provider.streamMessage(plain).finalResponse();
        expect(streamed.content).toEqual([{ type: "text", text: "Streamed." }]);
        const counted = await contract.provider.countTokens(plain);
        expect(counted.inputTokens).toBeGreaterThan(0);
      },
      timeout,
    );

    it(
      "a key the request does not have is refused, naming the right one, before anything is sent",
      async () => {
        const snake = { model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
        const error = await captureError(contract.provider.createMessage(snake as unknown as ModelRequest));
        expect(error).toBeInstanceOf(InvalidMessageError);
        expect((error as Error).message).toContain('"max_tokens"');
        expect((error as Error).message).toContain('"maxTokens"');

        const misspelt = {
          model,
          maxTokens: 64,
          messages: [{ role: "user", content: "hi" }],
          stop_sequences: ["x"],
        };
        const streamError = await captureError(
          contract.provider.streamMessage(misspelt as unknown as ModelRequest).finalResponse(),
        );
        expect(streamError).toBeInstanceOf(InvalidMessageError);
        expect((streamError as Error).message).toContain('"stopSequences"');
        expect(contract.fake.requests).toHaveLength(0);
      },
      timeout,
    );

    it(
      "a conversation imported with unsigned thinking blocks is accepted (create, stream and count)",
      async () => {
        // Claude Code and other tools record thinking without the signature the APIs ask for; a provider
        // whose API refuses such blocks must leave them out, one whose API takes them converts them.
        const imported: ModelRequest = {
          model,
          maxTokens: 64,
          messages: [
            userText("What is the weather in Paris?"),
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "The user wants the weather." },
                { type: "text", text: "Sunny." },
              ],
            },
            {
              role: "assistant",
              content: [{ type: "thinking", thinking: "Nothing else to say.", signature: "" }],
            },
            userText("And in Rome?"),
          ],
        };
        contract.fake.enqueue({ kind: "reply", text: "Also sunny." });
        const response = await contract.provider.createMessage(imported);
        expect(response.content).toEqual([{ type: "text", text: "Also sunny." }]);
        expect(JSON.stringify(contract.lastRequestBody())).toContain("And in Rome?");
        contract.fake.enqueue({ kind: "reply", text: "Streamed." });
        const streamed = await contract.provider.streamMessage(imported).finalResponse();
        expect(streamed.content).toEqual([{ type: "text", text: "Streamed." }]);
        expect((await contract.provider.countTokens(imported)).method).toBe(
          contract.capabilities.nativeTokenCounting ? "native" : "heuristic",
        );
      },
      timeout,
    );
  });
}
