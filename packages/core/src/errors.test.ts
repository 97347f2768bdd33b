import { describe, expect, it } from "vitest";
import { isUnforgetError, PromptTooLongError, ProviderRequestError, UnforgetError } from "./errors.ts";

describe("errors", () => {
  it("computes the token gap only when both numbers are known", () => {
    const known = new PromptTooLongError("too long", { actualTokens: 227_255, limitTokens: 200_000 });
    expect(known.tokenGap).toBe(27_255);
    expect(known.code).toBe("prompt_too_long");
    expect(new PromptTooLongError("Input is too long for requested model.").tokenGap).toBeUndefined();
  });

  it("keeps name, code and cause for programmatic handling", () => {
    const cause = new Error("socket hang up");
    const error = new ProviderRequestError("Bedrock throttled the request; retry later.", {
      providerId: "bedrock",
      status: 429,
      retryable: true,
      cause,
    });
    expect(error).toBeInstanceOf(UnforgetError);
    expect(isUnforgetError(error)).toBe(true);
    expect(error.name).toBe("ProviderRequestError");
    expect(error.cause).toBe(cause);
    expect(error.retryable).toBe(true);
  });
});
