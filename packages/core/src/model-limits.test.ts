import { describe, expect, it, vi } from "vitest";
import { canonicalModelId, createModelLimitsRegistry, UNKNOWN_MODEL_LIMITS } from "./model-limits.ts";

describe("canonicalModelId", () => {
  it.each([
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
    ["global.anthropic.claude-opus-4-7-v1", "claude-opus-4-7"],
    ["apac.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"],
    [
      "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6",
      "claude-sonnet-4-6",
    ],
    ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
    ["projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro", "gemini-2.5-pro"],
    ["Gemini-2.5-Flash", "gemini-2.5-flash"],
  ])("%s → %s", (input, expected) => {
    expect(canonicalModelId(input)).toBe(expected);
  });
});

describe("createModelLimitsRegistry", () => {
  it("resolves provider ids to known limits, longest prefix first", () => {
    const registry = createModelLimitsRegistry();
    expect(registry.get("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toMatchObject({
      model: "claude-sonnet-4-5",
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      limitKind: "total",
      known: true,
    });
    expect(registry.get("claude-opus-4-1-20250805").maxOutputTokens).toBe(32_000);
    expect(registry.get("claude-opus-4-7").contextWindow).toBe(1_000_000);
    expect(registry.get("gemini-2.5-flash-lite")).toMatchObject({
      contextWindow: 1_048_576,
      limitKind: "input",
    });
  });

  it("gives unknown models conservative defaults and warns once, never throws", () => {
    const onUnknownModel = vi.fn();
    const registry = createModelLimitsRegistry({ onUnknownModel });
    const limits = registry.get("my-local-llama");
    expect(limits).toMatchObject({ known: false, contextWindow: UNKNOWN_MODEL_LIMITS.contextWindow });
    registry.get("my-local-llama");
    expect(onUnknownModel).toHaveBeenCalledTimes(1);
  });

  it("applies overrides by exact id and by family", () => {
    const registry = createModelLimitsRegistry({
      overrides: {
        "my-local-llama": { contextWindow: 32_768 },
        "claude-sonnet-4-5": { contextWindow: 1_000_000 },
      },
      onUnknownModel: () => {},
    });
    expect(registry.get("my-local-llama")).toMatchObject({ contextWindow: 32_768, known: true });
    expect(registry.get("us.anthropic.claude-sonnet-4-5-20250929-v1:0").contextWindow).toBe(1_000_000);
    registry.set("gemini-2.5-pro", { contextWindow: 131_072 });
    expect(registry.get("gemini-2.5-pro").contextWindow).toBe(131_072);
  });
});
