import { describe, expect, it } from "vitest";
import { parsePromptTooLongMessage } from "./prompt-too-long.ts";

describe("parsePromptTooLongMessage", () => {
  it("reads the numbers of every known wording", () => {
    expect(parsePromptTooLongMessage("prompt is too long: 211180 tokens > 200000 maximum")).toEqual({
      actualTokens: 211180,
      limitTokens: 200000,
    });
    expect(
      parsePromptTooLongMessage(
        "The model returned the following errors: prompt is too long: 227255 tokens > 200000 maximum",
      ),
    ).toEqual({ actualTokens: 227255, limitTokens: 200000 });
    expect(
      parsePromptTooLongMessage(
        "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ).toEqual({ actualTokens: 1200293, limitTokens: 1048576 });
    expect(
      parsePromptTooLongMessage(
        "Unable to submit request because the input token count is 35238 but model only supports up to 32768. Reduce the input token count and try again.",
      ),
    ).toEqual({ actualTokens: 35238, limitTokens: 32768 });
    expect(
      parsePromptTooLongMessage("input length and max_tokens exceed context limit: 188240 + 21333 > 200000"),
    ).toEqual({
      actualTokens: 209573,
      limitTokens: 200000,
    });
  });

  it("recognises generic wordings without numbers", () => {
    expect(parsePromptTooLongMessage("Input is too long for requested model.")).toEqual({});
    expect(parsePromptTooLongMessage("Prompt is too long")).toEqual({});
  });

  it("returns undefined for unrelated errors", () => {
    expect(
      parsePromptTooLongMessage("max_tokens: 10000 > 4096, which is the maximum allowed"),
    ).toBeUndefined();
    expect(parsePromptTooLongMessage("Overloaded")).toBeUndefined();
  });
});
