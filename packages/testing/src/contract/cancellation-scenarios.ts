import { AbortedError, ProviderRequestError } from "@unforget/core";
import { describe, expect, it, vi } from "vitest";
import { type ContractContext, captureError } from "./contract-context.ts";

/** Per-attempt timeouts and aborts: before, during and between attempts, and mid-stream. */
export function describeCancellationScenarios(contract: ContractContext): void {
  const { capabilities, timeout, request } = contract;
  describe("timeouts", () => {
    it(
      "a per-attempt timeout fails a request that never answers, as a retryable ProviderRequestError",
      async () => {
        contract.fake.enqueue({ kind: "hang" });
        const error = await captureError(
          contract.provider.createMessage(request(), { timeoutMs: 100, maxRetries: 0 }),
        );
        expect(error).toBeInstanceOf(ProviderRequestError);
        expect((error as ProviderRequestError).retryable).toBe(true);
      },
      timeout,
    );

    it(
      "a per-attempt timeout bounds each wait of a stream, not how long the stream takes",
      async () => {
        // A first call opens the connection and loads what the SDK loads lazily, so only waits are timed.
        await contract.provider.createMessage(request());
        // Thinking and text, their frames 100 ms apart: the stream lasts far longer than the 400 ms
        // timeout, while no single wait comes near it.
        contract.fake.enqueue({
          kind: "reply",
          thinking: "Two cities, two lookups.",
          text: "a slow but steady answer",
          delayMs: 100,
        });
        const started = Date.now();
        const response = await contract.provider
          .streamMessage(request(), { timeoutMs: 400, maxRetries: 0 })
          .finalResponse();
        expect(Date.now() - started).toBeGreaterThan(400);
        expect(response.content.find((block) => block.type === "text")).toMatchObject({
          text: "a slow but steady answer",
        });
      },
      timeout,
    );
  });

  describe("abort", () => {
    it(
      "aborting a hanging request rejects with AbortedError (create and stream)",
      async () => {
        contract.fake.enqueue({ kind: "hang" });
        const controller = new AbortController();
        const pending = contract.provider.createMessage(request(), { signal: controller.signal });
        setTimeout(() => controller.abort(), 50);
        expect(await captureError(pending)).toBeInstanceOf(AbortedError);

        contract.fake.enqueue({ kind: "hang" });
        const streamController = new AbortController();
        const stream = contract.provider.streamMessage(request(), { signal: streamController.signal });
        setTimeout(() => streamController.abort(), 50);
        expect(await captureError(stream.finalResponse())).toBeInstanceOf(AbortedError);
      },
      timeout,
    );

    it.runIf(capabilities.abortClosesConnection === true)(
      "an abort cancels the request on the wire: the fake sees the connection close (create and stream)",
      async () => {
        contract.fake.enqueue({ kind: "hang" });
        const controller = new AbortController();
        const pending = contract.provider.createMessage(request(), { signal: controller.signal });
        await vi.waitFor(() => expect(contract.fake.requests).toHaveLength(1));
        expect(contract.fake.requests[0]?.closedDuringHang).toBeUndefined();
        controller.abort();
        expect(await captureError(pending)).toBeInstanceOf(AbortedError);
        await vi.waitFor(() => expect(contract.fake.requests[0]?.closedDuringHang).toBe(true));

        contract.fake.enqueue({ kind: "hang" });
        const streamController = new AbortController();
        const stream = contract.provider.streamMessage(request(), { signal: streamController.signal });
        const streamed = captureError(stream.finalResponse());
        await vi.waitFor(() => expect(contract.fake.requests).toHaveLength(2));
        streamController.abort();
        expect(await streamed).toBeInstanceOf(AbortedError);
        await vi.waitFor(() => expect(contract.fake.requests[1]?.closedDuringHang).toBe(true));
      },
      timeout,
    );

    it(
      "aborting after the first streamed event ends the stream with AbortedError",
      async () => {
        contract.fake.enqueue({
          kind: "reply",
          text: "a slow answer streamed in several frames",
          delayMs: 30,
        });
        const controller = new AbortController();
        const stream = contract.provider.streamMessage(request(), { signal: controller.signal });
        const error = await captureError(
          (async () => {
            for await (const _event of stream) controller.abort();
          })(),
        );
        expect(error).toBeInstanceOf(AbortedError);
        await expect(stream.finalResponse()).rejects.toBeInstanceOf(AbortedError);
      },
      timeout,
    );

    it(
      "aborting during a retry wait rejects with AbortedError without another attempt",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 30 });
        const controller = new AbortController();
        const pending = contract.provider.createMessage(request(), { signal: controller.signal });
        setTimeout(() => controller.abort(), 100);
        expect(await captureError(pending)).toBeInstanceOf(AbortedError);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );

    it(
      "an already aborted signal sends nothing",
      async () => {
        const error = await captureError(
          contract.provider.createMessage(request(), { signal: AbortSignal.abort() }),
        );
        expect(error).toBeInstanceOf(AbortedError);
        expect(contract.fake.requests).toHaveLength(0);
      },
      timeout,
    );
  });
}
