import {
  createModelLimitsRegistry,
  PromptTooLongError,
  ProviderRequestError,
  UNKNOWN_MODEL_LIMITS,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createLearnedModelLimits } from "./learned-model-limits.ts";

describe("createLearnedModelLimits", () => {
  const overflow = (limitTokens: number | undefined) =>
    new PromptTooLongError("too long", {
      providerId: "vertex",
      actualTokens: 300_000,
      ...(limitTokens === undefined ? {} : { limitTokens }),
    });

  it("lowers a known window to the maximum an overflow error states, for that model id only", () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry());
    expect(limits.learnFromPromptTooLong("gemini-2.5-pro", overflow(65_536))).toBe(true);
    expect(limits.get("gemini-2.5-pro")).toMatchObject({
      contextWindow: 65_536,
      maxOutputTokens: 65_536,
      limitKind: "input",
      known: true,
    });
    expect(limits.get("Gemini-2.5-Pro ").contextWindow).toBe(65_536);
    expect(limits.get("gemini-2.5-flash").contextWindow).toBe(1_048_576);
  });

  it("never raises a known window, and keeps the smallest maximum seen", () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry());
    expect(limits.learnFromPromptTooLong("claude-sonnet-4-5", overflow(2_000_000))).toBe(false);
    expect(limits.get("claude-sonnet-4-5").contextWindow).toBe(200_000);
    limits.learnFromPromptTooLong("claude-sonnet-4-5", overflow(4_000));
    expect(limits.learnFromPromptTooLong("claude-sonnet-4-5", overflow(131_072))).toBe(false);
    expect(limits.get("claude-sonnet-4-5").contextWindow).toBe(4_000);
  });

  it("replaces an unrecognised model's default with the stated maximum", () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry({ onUnknownModel: () => {} }));
    expect(limits.learnFromPromptTooLong("my-local-llama", overflow(262_144))).toBe(true);
    expect(limits.get("my-local-llama")).toMatchObject({
      contextWindow: 262_144,
      maxOutputTokens: UNKNOWN_MODEL_LIMITS.maxOutputTokens,
      known: false,
    });
  });

  it("ignores errors without a stated maximum and errors that are not overflows", () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry());
    expect(limits.learnFromPromptTooLong("gemini-2.5-pro", overflow(undefined))).toBe(false);
    expect(limits.learnFromPromptTooLong("gemini-2.5-pro", overflow(0))).toBe(false);
    const other = new ProviderRequestError("overloaded", { providerId: "vertex", retryable: true });
    expect(limits.learnFromPromptTooLong("gemini-2.5-pro", other)).toBe(false);
    expect(limits.learnFromPromptTooLong("gemini-2.5-pro", new Error("65536"))).toBe(false);
    expect(limits.get("gemini-2.5-pro").contextWindow).toBe(1_048_576);
  });

  it("takes entries set at run time as the base, still bounded by a learned maximum", () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry());
    limits.set("claude-sonnet-4-5", { contextWindow: 1_000_000, maxOutputTokens: 64_000 });
    expect(limits.get("claude-sonnet-4-5").contextWindow).toBe(1_000_000);
    limits.learnFromPromptTooLong("claude-sonnet-4-5", overflow(200_000));
    limits.set("claude-sonnet-4-5", { contextWindow: 1_000_000 });
    expect(limits.get("claude-sonnet-4-5").contextWindow).toBe(200_000);
  });

  it("learns from the error a wrapped stream ends with, passing events through and rethrowing", async () => {
    const limits = createLearnedModelLimits(createModelLimitsRegistry());
    async function* failing() {
      yield "first";
      throw overflow(32_768);
    }
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of limits.learnFromStream("gemini-2.5-pro", failing())) seen.push(event);
    })().catch((caught: unknown) => caught);
    expect(seen).toEqual(["first"]);
    expect(error).toBeInstanceOf(PromptTooLongError);
    expect(limits.get("gemini-2.5-pro").contextWindow).toBe(32_768);
  });

  it("keeps what it learned per instance", () => {
    const registry = createModelLimitsRegistry();
    const europe = createLearnedModelLimits(registry);
    const america = createLearnedModelLimits(registry);
    europe.learnFromPromptTooLong("gemini-2.5-pro", overflow(131_072));
    expect(europe.get("gemini-2.5-pro").contextWindow).toBe(131_072);
    expect(america.get("gemini-2.5-pro").contextWindow).toBe(1_048_576);
  });
});
