import { InvalidMessageError, type ModelRequest } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { checkRequest } from "./check-request.ts";

const refusal = (request: unknown): string => {
  try {
    checkRequest(request as ModelRequest);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return (error as Error).message;
  }
  throw new Error("Expected the request to be refused.");
};

describe("checkRequest", () => {
  it("takes a string as text content and leaves a typed request untouched", () => {
    const typed: ModelRequest = { model: "m", maxTokens: 1, messages: [{ role: "user", content: [] }] };
    expect(checkRequest(typed)).toBe(typed);
    const plain: ModelRequest = { model: "m", maxTokens: 1, messages: [{ role: "user", content: "hi" }] };
    expect(checkRequest(plain).messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  });

  it("names the field a snake_case or misspelt key was meant to be", () => {
    expect(refusal({ model: "m", max_tokens: 1, messages: [] })).toContain('Did you mean "maxTokens"?');
    expect(refusal({ model: "m", maxToken: 1, messages: [] })).toContain('Did you mean "maxTokens"?');
    expect(refusal({ model: "m", tool_choice: { type: "auto" }, messages: [] })).toContain('"toolChoice"');
    expect(refusal({ model: "m", messages: [], frobnicate: true })).toContain("The fields are model, system");
  });

  it("refuses messages and contents of the wrong shape, saying what they were", () => {
    expect(refusal({ model: "m", messages: "hi" })).toContain("it is a string");
    expect(refusal({ model: "m", messages: [{ role: "user", content: 42 }] })).toContain(
      "messages[0].content must be a string or an array",
    );
  });
});
