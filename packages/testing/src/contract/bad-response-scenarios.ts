import { ProviderRequestError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { type ContractContext, captureError, readUntilError } from "./contract-context.ts";

/**
 * A 200 is not an answer until it reads as one: a gateway's HTML page, the other format (an event stream
 * for a whole response, JSON for a stream) and a stream cut short are typed errors that say what came back,
 * never an empty or partial response that looks like success.
 */
export function describeBadResponseScenarios(contract: ContractContext): void {
  const { timeout, request } = contract;

  /** The call fails with a non-retryable `ProviderRequestError` naming the content type it got, after one request. */
  const expectUnexpectedResponse = (error: unknown, contentType: string) => {
    expect(error).toBeInstanceOf(ProviderRequestError);
    const typed = error as ProviderRequestError;
    expect(typed.providerId).toBe(contract.provider.providerId);
    expect(typed.retryable).toBe(false);
    expect(typed.providerErrorType).toBe("unexpected_response");
    expect(typed.message).toContain(contentType);
  };

  describe("a 200 that is not an answer is a typed error saying what came back", () => {
    it(
      "a text/html page (a gateway's sign-in form), for create and stream",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "html_page" });
        const created = await captureError(contract.provider.createMessage(request()));
        expectUnexpectedResponse(created, "text/html");
        expect((created as Error).message).toContain("<!DOCTYPE");
        expect(contract.fake.requests).toHaveLength(1);

        contract.fake.enqueue({ kind: "error", error: "html_page" });
        const streamed = await captureError(contract.provider.streamMessage(request()).finalResponse());
        expectUnexpectedResponse(streamed, "text/html");
        expect((streamed as Error).message).toContain("<!DOCTYPE");
        expect(contract.fake.requests).toHaveLength(2);
      },
      timeout,
    );

    it(
      "an event stream answering a whole-response call, and JSON answering a stream",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "wrong_format" });
        const created = await captureError(contract.provider.createMessage(request()));
        expectUnexpectedResponse(created, "event");
        contract.fake.enqueue({ kind: "error", error: "wrong_format" });
        const streamed = await captureError(contract.provider.streamMessage(request()).finalResponse());
        expectUnexpectedResponse(streamed, "json");
        expect(contract.fake.requests).toHaveLength(2);
      },
      timeout,
    );
  });

  describe("a stream that ends before its end-of-message event", () => {
    it(
      "after events reached the caller: an error from the iterator and finalResponse, not a short answer",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "truncated_stream", midStreamAfterEvents: 3 });
        const stream = contract.provider.streamMessage(request());
        const { seen, error } = await readUntilError(stream);
        expect(seen.length).toBeGreaterThan(0);
        expect(seen.some((event) => event.type === "message_stop")).toBe(false);
        expect(error).toBeInstanceOf(ProviderRequestError);
        expect((error as ProviderRequestError).providerErrorType).toBe("truncated_stream");
        await expect(stream.finalResponse()).rejects.toBeInstanceOf(ProviderRequestError);
        // Events already reached the caller: never retried.
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );

    it(
      "before its first event: retried like any transient failure, then the answer",
      async () => {
        contract.fake.enqueue(
          { kind: "error", error: "truncated_stream", midStreamAfterEvents: 0 },
          { kind: "reply", text: "complete at last" },
        );
        const response = await contract.provider.streamMessage(request()).finalResponse();
        expect(response.content).toEqual([{ type: "text", text: "complete at last" }]);
        expect(contract.fake.requests).toHaveLength(2);

        contract.fake.enqueue({ kind: "error", error: "truncated_stream", midStreamAfterEvents: 0 });
        const given = await captureError(
          contract.provider.streamMessage(request(), { maxRetries: 0 }).finalResponse(),
        );
        expect(given).toBeInstanceOf(ProviderRequestError);
        expect((given as ProviderRequestError).retryable).toBe(true);
      },
      timeout,
    );

    it(
      "a whole response cut short is a typed error too",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "truncated_stream" });
        const error = await captureError(contract.provider.createMessage(request(), { maxRetries: 0 }));
        expect(error).toBeInstanceOf(ProviderRequestError);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );
  });
}
