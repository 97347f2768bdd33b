import { PromptTooLongError, ProviderRequestError, UnforgetError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { type ContractContext, captureError, readUntilError } from "./contract-context.ts";

/** Retries: transient failures are retried (streams only before their first event), others never. */
export function describeRetryScenarios(contract: ContractContext): void {
  const { timeout, settings, request } = contract;
  describe("retries", () => {
    it(
      "retries rate limits, overload and server errors, then succeeds",
      async () => {
        contract.fake.enqueue(
          { kind: "error", error: "rate_limit", retryAfterSeconds: 0 },
          { kind: "error", error: "overloaded" },
          { kind: "reply", text: "third time lucky" },
        );
        const response = await contract.provider.createMessage(request());
        expect(response.content).toEqual([{ type: "text", text: "third time lucky" }]);
        expect(contract.fake.requests).toHaveLength(3);

        contract.fake.enqueue(
          { kind: "error", error: "server_error" },
          { kind: "reply", text: "streamed after retry" },
        );
        const streamed = await contract.provider.streamMessage(request()).finalResponse();
        expect(streamed.content).toEqual([{ type: "text", text: "streamed after retry" }]);
        expect(contract.fake.requests).toHaveLength(5);
      },
      timeout,
    );

    it(
      "never retries a stream once events have reached the caller, even for a retryable error",
      async () => {
        // Only the error is scripted (a leftover reply would leak into later scenarios): a retry would get
        // the fake's default reply and show as a second request and a second message_start.
        contract.fake.enqueue({ kind: "error", error: "overloaded", midStreamAfterEvents: 2 });
        const stream = contract.provider.streamMessage(request());
        const { seen, error } = await readUntilError(stream);
        expect(seen.length).toBeGreaterThan(0);
        expect(error).toBeInstanceOf(ProviderRequestError);
        expect(error).not.toBeInstanceOf(PromptTooLongError);
        await expect(stream.finalResponse()).rejects.toBeInstanceOf(ProviderRequestError);
        expect(seen.filter((event) => event.type === "message_start")).toHaveLength(1);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );

    it(
      "gives up after maxRetries with a retryable ProviderRequestError",
      async () => {
        contract.fake.enqueue(
          { kind: "error", error: "overloaded" },
          { kind: "error", error: "overloaded" },
          { kind: "error", error: "overloaded" },
        );
        const error = await captureError(contract.provider.createMessage(request()));
        expect(error).toBeInstanceOf(ProviderRequestError);
        expect((error as ProviderRequestError).retryable).toBe(true);
        expect((error as ProviderRequestError).providerId).toBe(contract.provider.providerId);
        expect(contract.fake.requests).toHaveLength(settings.maxRetries + 1);
      },
      timeout,
    );

    it(
      "honours maxRetries per call and never retries a non-retryable error",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "rate_limit", retryAfterSeconds: 0 });
        const once = await captureError(contract.provider.createMessage(request(), { maxRetries: 0 }));
        expect(once).toBeInstanceOf(ProviderRequestError);
        expect((once as ProviderRequestError).status).toBe(429);
        expect(contract.fake.requests).toHaveLength(1);

        contract.fake.enqueue({ kind: "error", error: "invalid_request" });
        const invalid = await captureError(contract.provider.createMessage(request()));
        expect(invalid).toBeInstanceOf(ProviderRequestError);
        expect((invalid as ProviderRequestError).retryable).toBe(false);
        expect(contract.fake.requests).toHaveLength(2);

        contract.fake.enqueue({ kind: "error", error: "authentication" });
        const denied = await captureError(contract.provider.createMessage(request()));
        expect(denied).toBeInstanceOf(ProviderRequestError);
        expect((denied as ProviderRequestError).retryable).toBe(false);
        expect(contract.fake.requests).toHaveLength(3);
      },
      timeout,
    );

    it(
      "a malformed response body is a typed error, never a crash or a hang",
      async () => {
        contract.fake.enqueue({ kind: "error", error: "malformed" });
        const error = await captureError(contract.provider.createMessage(request(), { maxRetries: 0 }));
        expect(error).toBeInstanceOf(UnforgetError);
        expect(contract.fake.requests).toHaveLength(1);
      },
      timeout,
    );
  });
}
