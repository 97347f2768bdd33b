import { AbortedError, ProviderRequestError } from "@unforget/core";
import { describe, expect, it, vi } from "vitest";
import { type ContractContext, captureError } from "./contract-context.ts";
import { withScriptedClock } from "./scripted-clock.ts";

/** Per-attempt timeouts and aborts: before, during and between attempts, and mid-stream. */
export function describeCancellationScenarios(contract: ContractContext): void {
  const { capabilities, timeout, request } = contract;
  describe("timeouts", () => {
    it(
      "a per-attempt timeout fails a request that never answers, as a retryable ProviderRequestError",
      () =>
        withScriptedClock(async (clock) => {
          contract.fake.enqueue({ kind: "hang" });
          let settled = false;
          const pending = captureError(
            contract.provider.createMessage(request(), { timeoutMs: 100, maxRetries: 0 }),
          ).finally(() => {
            settled = true;
          });
          await clock.until(() => contract.fake.requests.length === 1, "the request to reach the fake");
          await clock.advance(99);
          expect(settled).toBe(false);
          await clock.advance(1);
          const error = await pending;
          expect(error).toBeInstanceOf(ProviderRequestError);
          expect((error as ProviderRequestError).retryable).toBe(true);
        }),
      timeout,
    );

    it(
      "a per-attempt timeout bounds each wait of a stream, not how long the stream takes",
      () =>
        withScriptedClock(async (clock) => {
          // The reader holds every event for 300 ms of the scripted clock: the stream lasts far longer than
          // the 400 ms timeout, while no single wait comes near it. A deadline for the whole stream fails.
          contract.fake.enqueue({
            kind: "reply",
            thinking: "Two cities, two lookups.",
            text: "a slow reader",
          });
          const stream = contract.provider.streamMessage(request(), { timeoutMs: 400, maxRetries: 0 });
          let held = 0;
          for await (const _event of stream) {
            await clock.advance(300);
            held += 300;
          }
          expect(held).toBeGreaterThan(400);
          const response = await stream.finalResponse();
          expect(response.content.find((block) => block.type === "text")).toMatchObject({
            text: "a slow reader",
          });
        }),
      timeout,
    );
  });

  describe("abort", () => {
    it(
      "aborting a hanging request rejects with AbortedError (create and stream)",
      async () => {
        // Each abort comes once the fake holds the request, so the hang it consumed cannot linger.
        contract.fake.enqueue({ kind: "hang" });
        const controller = new AbortController();
        const pending = captureError(
          contract.provider.createMessage(request(), { signal: controller.signal }),
        );
        await vi.waitFor(() => expect(contract.fake.requests).toHaveLength(1));
        controller.abort();
        expect(await pending).toBeInstanceOf(AbortedError);

        contract.fake.enqueue({ kind: "hang" });
        const streamController = new AbortController();
        const stream = contract.provider.streamMessage(request(), { signal: streamController.signal });
        const streamed = captureError(stream.finalResponse());
        await vi.waitFor(() => expect(contract.fake.requests).toHaveLength(2));
        streamController.abort();
        expect(await streamed).toBeInstanceOf(AbortedError);
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
        const pending = captureError(
          contract.provider.createMessage(request(), { signal: controller.signal }),
        );
        // Asked to wait 30 s before the next attempt: an abort once the first one reached the fake lands
        // in that wait (or just before it), never before anything was sent.
        await vi.waitFor(() => expect(contract.fake.requests).toHaveLength(1));
        controller.abort();
        expect(await pending).toBeInstanceOf(AbortedError);
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
