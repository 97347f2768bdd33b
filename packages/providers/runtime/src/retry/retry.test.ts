import { AbortedError, ProviderRequestError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { computeRetryDelay, parseRetryAfter, withRetries } from "./retry.ts";

const transient = (retryAfterMs?: number) =>
  new ProviderRequestError("overloaded", {
    providerId: "test",
    retryable: true,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe("withRetries", () => {
  it("retries transient failures and returns the first success", async () => {
    let calls = 0;
    const delays: number[] = [];
    const result = await withRetries(
      async () => {
        calls++;
        if (calls < 3) throw transient(calls);
        return "ok";
      },
      { maxRetries: 2, onRetry: (info) => delays.push(info.delayMs) },
    );
    expect(result).toBe("ok");
    expect(calls).toBe(3);
    expect(delays).toEqual([1, 2]);
  });

  it("gives up after maxRetries and rethrows the last error", async () => {
    let calls = 0;
    const failure = withRetries(
      async () => {
        calls++;
        throw transient(0);
      },
      { maxRetries: 1 },
    );
    await expect(failure).rejects.toBeInstanceOf(ProviderRequestError);
    expect(calls).toBe(2);
  });

  it("does not retry a permanent error", async () => {
    let calls = 0;
    await expect(
      withRetries(async () => {
        calls++;
        throw new ProviderRequestError("bad request", { providerId: "test", retryable: false });
      }),
    ).rejects.toThrow("bad request");
    expect(calls).toBe(1);
  });

  it("rejects with AbortedError when aborted during a wait", async () => {
    const controller = new AbortController();
    const failure = withRetries(
      async () => {
        setTimeout(() => controller.abort(), 5);
        throw transient(60_000);
      },
      { signal: controller.signal },
    );
    await expect(failure).rejects.toBeInstanceOf(AbortedError);
  });

  it("does not start when the signal is already aborted", async () => {
    let calls = 0;
    const failure = withRetries(
      async () => {
        calls++;
      },
      { signal: AbortSignal.abort() },
    );
    await expect(failure).rejects.toBeInstanceOf(AbortedError);
    expect(calls).toBe(0);
  });
});

describe("computeRetryDelay", () => {
  it("honours the provider's hint, capped", () => {
    expect(computeRetryDelay(1, { retryable: true, retryAfterMs: 1500 })).toBe(1500);
    expect(
      computeRetryDelay(1, { retryable: true, retryAfterMs: 9_000_000 }, { maxRetryAfterMs: 5000 }),
    ).toBe(5000);
  });

  it("doubles per retry with at most 25% jitter removed", () => {
    expect(computeRetryDelay(1, { retryable: true }, { random: () => 0 })).toBe(500);
    expect(computeRetryDelay(3, { retryable: true }, { random: () => 0 })).toBe(2000);
    expect(computeRetryDelay(3, { retryable: true }, { random: () => 0.999 })).toBeGreaterThanOrEqual(1500);
    expect(computeRetryDelay(30, { retryable: true }, { random: () => 0, maxDelayMs: 8000 })).toBe(8000);
  });
});

describe("parseRetryAfter", () => {
  it("reads retry-after-ms before retry-after seconds or dates", () => {
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(parseRetryAfter({ "Retry-After": "2" })).toBe(2000);
    expect(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }, Date.UTC(2026, 0, 1))).toBe(
      10_000,
    );
    expect(parseRetryAfter(new Headers({}))).toBeUndefined();
  });
});
