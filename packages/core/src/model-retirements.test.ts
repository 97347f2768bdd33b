import { describe, expect, it } from "vitest";
import { modelRetirement } from "./model-retirements.ts";

describe("modelRetirement", () => {
  it("knows a deprecated model under every provider's id for it", () => {
    const sonnet45 = {
      model: "claude-sonnet-4-5",
      retiresOn: "2026-11-30",
      replacement: "claude-sonnet-4-6",
    };
    for (const id of [
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929",
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
      "claude-sonnet-4-5@20250929",
    ]) {
      expect(modelRetirement(id), id).toEqual(sonnet45);
    }
    expect(modelRetirement("claude-3-5-sonnet-20241022")?.replacement).toBe("claude-sonnet-4-6");
  });

  it("says nothing of a current, a newer or an unknown model", () => {
    for (const id of [
      "claude-sonnet-4-6",
      "us.anthropic.claude-sonnet-4-6",
      "claude-opus-4-6",
      "claude-haiku-4-5",
      "gemini-2.5-pro",
      "my-local-model",
    ]) {
      expect(modelRetirement(id), id).toBeUndefined();
    }
  });
});
