import { describe, expect, it } from "vitest";
import { modelNameProblem } from "./model-names.ts";

describe("modelNameProblem", () => {
  it("leaves known models alone, in any provider's naming", () => {
    for (const model of [
      "claude-sonnet-4-6",
      "claude-sonnet-4-5-20250929",
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "claude-sonnet-4-5@20250929",
      "gemini-2.5-pro",
    ])
      expect(modelNameProblem(model), model).toBeUndefined();
  });

  it("takes a name close to a known one for a typo, and suggests it in the naming given", () => {
    expect(modelNameProblem("claude-sonet-4-6")).toContain("did you mean claude-sonnet-4-6?");
    expect(modelNameProblem("us.anthropic.claude-sonet-4-5-20250929-v1:0")).toContain(
      "did you mean us.anthropic.claude-sonnet-4-5-20250929-v1:0?",
    );
  });

  it("leaves a name close to nothing known alone, and knows what the settings' models name", () => {
    expect(modelNameProblem("house-llm")).toBeUndefined();
    expect(
      modelNameProblem("claude-sonet-4-6", { "claude-sonet-4-6": { contextWindow: 100_000 } }),
    ).toBeUndefined();
  });
});
