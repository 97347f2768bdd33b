import { PromptTooLongError, RequestTooLargeError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { type ContractContext, captureError, readUntilError } from "./contract-context.ts";

/** Every overflow form becomes `PromptTooLongError`, and its stated maximum bounds the learned window. */
export function describeOverflowScenarios(contract: ContractContext): void {
  const { capabilities, model, timeout, request, lastRequestBody, withProvider } = contract;
  describe("every overflow form becomes PromptTooLongError", () => {
    it(
      "error response with numbers: tokenGap = actual - limit (create and stream)",
      async () => {
        contract.fake.enqueue({
          kind: "error",
          error: "prompt_too_long",
          actualTokens: 250_000,
          limitTokens: 200_000,
        });
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(PromptTooLongError);
        const overflow = error as PromptTooLongError;
        expect(overflow.actualTokens).toBe(250_000);
        expect(overflow.limitTokens).toBe(200_000);
        expect(overflow.tokenGap).toBe(50_000);
        expect(overflow.providerId).toBe(contract.provider.providerId);
        expect(contract.fake.requests).toHaveLength(1);

        contract.fake.enqueue({
          kind: "error",
          error: "prompt_too_long",
          actualTokens: 1_200_000,
          limitTokens: 1_048_576,
        });
        const streamError = await captureError(contract.provider.streamMessage(request()).finalResponse());
        expect(streamError).toBeInstanceOf(PromptTooLongError);
        expect((streamError as PromptTooLongError).tokenGap).toBe(151_424);
      },
      timeout,
    );

    it(
      "the fake's context limit produces the real error, with the fake's own count",
      async () => {
        contract.fake.setContextLimit(5);
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(PromptTooLongError);
        const counted = contract.fake.countTokens(lastRequestBody());
        expect((error as PromptTooLongError).actualTokens).toBe(counted);
        expect((error as PromptTooLongError).limitTokens).toBe(5);
        expect((error as PromptTooLongError).tokenGap).toBe(counted - 5);
      },
      timeout,
    );

    it(
      "the maximum an overflow error states becomes getModelLimits(model).contextWindow, never higher",
      async () => {
        const overflow = (actualTokens: number, limitTokens: number, midStreamAfterEvents?: number) =>
          contract.fake.enqueue({
            kind: "error",
            error: "prompt_too_long",
            actualTokens,
            limitTokens,
            ...(midStreamAfterEvents === undefined ? {} : { midStreamAfterEvents }),
          });
        // A fresh instance: what a provider learns stays in that instance.
        const learning = withProvider({});
        const before = learning.getModelLimits(model);

        overflow(70_000, 65_536);
        expect(await captureError(learning.createMessage(request()))).toBeInstanceOf(PromptTooLongError);
        expect(learning.getModelLimits(model).contextWindow).toBe(65_536);
        expect(learning.getModelLimits(model).maxOutputTokens).toBe(before.maxOutputTokens);

        overflow(40_000, 32_768);
        const streamed = await captureError(learning.streamMessage(request()).finalResponse());
        expect(streamed).toBeInstanceOf(PromptTooLongError);
        expect(learning.getModelLimits(model).contextWindow).toBe(32_768);

        if (capabilities.midStreamPromptTooLong) {
          overflow(20_000, 16_384, 2);
          const midStream = await captureError(learning.streamMessage(request()).finalResponse());
          expect(midStream).toBeInstanceOf(PromptTooLongError);
          expect(learning.getModelLimits(model).contextWindow).toBe(16_384);
        }
        const learned = learning.getModelLimits(model).contextWindow;

        // A larger stated maximum later (another region's quota, a stale cap) does not raise it again.
        overflow(140_000, 131_072);
        await captureError(learning.createMessage(request()));
        expect(learning.getModelLimits(model).contextWindow).toBe(learned);
        expect(withProvider({}).getModelLimits(model).contextWindow).toBe(before.contextWindow);

        // An error never raises a known window.
        if (before.known) {
          const fresh = withProvider({});
          overflow(before.contextWindow * 2, before.contextWindow + 1_000);
          await captureError(fresh.createMessage(request()));
          expect(fresh.getModelLimits(model).contextWindow).toBe(before.contextWindow);
        }
      },
      timeout,
    );

    it.runIf(capabilities.genericPromptTooLong)(
      "generic wording without numbers: tokenGap undefined",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "prompt_too_long_generic" });
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(PromptTooLongError);
        expect((error as PromptTooLongError).tokenGap).toBeUndefined();
      },
      timeout,
    );

    it.runIf(capabilities.midStreamPromptTooLong)(
      "mid-stream error after some events: PromptTooLongError from the iterator and finalResponse",
      async () => {
        contract.fake.enqueue({
          kind: "error",
          error: "prompt_too_long",
          actualTokens: 210_000,
          limitTokens: 200_000,
          midStreamAfterEvents: 2,
        });
        const stream = contract.provider.streamMessage(request());
        const { seen, error } = await readUntilError(stream);
        expect(error).toBeInstanceOf(PromptTooLongError);
        expect((error as PromptTooLongError).tokenGap).toBe(10_000);
        expect(seen.length).toBeGreaterThan(0);
        await expect(stream.finalResponse()).rejects.toBeInstanceOf(PromptTooLongError);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );

    it.runIf(capabilities.contextWindowExceededStop)(
      "a 200 response with stop reason model_context_window_exceeded (create and stream)",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "context_window_exceeded_stop" });
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(PromptTooLongError);
        expect((error as PromptTooLongError).source).toBe("stop-reason");
        contract.fake.enqueue({ kind: "error", error: "context_window_exceeded_stop" });
        const streamError = await captureError(contract.provider.streamMessage(request()).finalResponse());
        expect(streamError).toBeInstanceOf(PromptTooLongError);
      },
      timeout,
    );

    it.runIf(capabilities.requestTooLarge)(
      "a byte-size rejection is RequestTooLargeError, not a token overflow",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "request_too_large" });
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(RequestTooLargeError);
        expect(error).not.toBeInstanceOf(PromptTooLongError);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );
  });
}
