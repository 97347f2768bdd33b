import type { ContentBlock, ModelResponse } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { type ContractContext, containsDeep, userText } from "./contract-context.ts";

/** Blocks this version does not model survive a round trip as `UnknownBlock`s. */
export function describeUnknownBlockScenarios(contract: ContractContext): void {
  const { capabilities, timeout, request, lastRequestBody } = contract;
  describe.runIf(capabilities.unknownBlocks !== undefined)("unknown block types are preserved", () => {
    const unknown = capabilities.unknownBlocks;
    it(
      "a raw block in a reply comes back as UnknownBlock with the original (create and stream)",
      async () => {
        if (!unknown) return;
        contract.fake.enqueue({ kind: "reply", text: "with extras", rawBlocks: [unknown.replyBlock] });
        const whole = await contract.provider.createMessage(request());
        const expected: ContentBlock = { type: "unknown", original: unknown.original };
        expect(whole.content).toContainEqual(expected);
        contract.fake.enqueue({ kind: "reply", text: "with extras", rawBlocks: [unknown.replyBlock] });
        const streamed: ModelResponse = await contract.provider.streamMessage(request()).finalResponse();
        expect(streamed.content).toContainEqual(expected);
      },
      timeout,
    );

    it.runIf(unknown?.sentUnchanged === true)(
      "an UnknownBlock sent in a request goes out unchanged",
      async () => {
        if (!unknown) return;
        contract.fake.enqueue({ kind: "reply", text: "ok" });
        await contract.provider.createMessage(
          request({
            messages: [
              userText("first"),
              {
                role: "assistant",
                content: [
                  { type: "unknown", original: unknown.original },
                  { type: "text", text: "answer" },
                ],
              },
              userText("second"),
            ],
          }),
        );
        expect(containsDeep(lastRequestBody(), unknown.original)).toBe(true);
      },
      timeout,
    );
  });
}
