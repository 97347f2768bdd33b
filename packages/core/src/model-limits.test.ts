import { describe, expect, it, vi } from "vitest";
import {
  bedrockFoundationModelId,
  canonicalModelId,
  createModelLimitsRegistry,
  UNKNOWN_MODEL_LIMITS,
} from "./model-limits.ts";

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

describe("bedrockFoundationModelId", () => {
  it.each([
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"],
    ["us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0"],
    // The `ap.` prefix is a cross-region profile too (Asia Pacific); a second copy of this parsing once missed it.
    ["ap.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"],
    ["apac.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0"],
    ["jp.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"],
    ["global.anthropic.claude-opus-4-7-v1", "anthropic.claude-opus-4-7-v1"],
    [
      "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6",
      "anthropic.claude-sonnet-4-6",
    ],
    ["arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"],
    [
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
    ],
    ["  anthropic.claude-sonnet-4-5-20250929-v1:0 ", "anthropic.claude-sonnet-4-5-20250929-v1:0"],
    ["amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"],
  ])("%s → %s", (input, expected) => {
    expect(bedrockFoundationModelId(input)).toBe(expected);
  });

  it("is what canonicalModelId builds on, so limits and counting agree on every prefix", () => {
    for (const prefix of ["us", "us-gov", "eu", "apac", "ap", "jp", "au", "ca", "global"]) {
      const id = `${prefix}.anthropic.claude-sonnet-4-5-20250929-v1:0`;
      expect(canonicalModelId(id)).toBe("claude-sonnet-4-5");
      expect(canonicalModelId(bedrockFoundationModelId(id))).toBe("claude-sonnet-4-5");
    }
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
    expect(registry.get("gemini-2.5-pro-preview").contextWindow).toBe(131_072);
    expect(registry.get("gemini-2.5-pro").contextWindow).toBe(131_072);
  });

  it("an override for one deployment id leaves the rest of the family alone", () => {
    const arn =
      "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0";
    const registry = createModelLimitsRegistry({ overrides: { [arn]: { contextWindow: 100_000 } } });
    expect(registry.get(arn).contextWindow).toBe(100_000);
    expect(registry.get("claude-sonnet-4-5").contextWindow).toBe(200_000);
    expect(registry.get("us.anthropic.claude-sonnet-4-5-20250929-v1:0").contextWindow).toBe(200_000);
  });
});
