import { describe, expect, it } from "vitest";
import { describeJsonError } from "./json-text.ts";

describe("describeJsonError", () => {
  it.each([
    ['{\n  "model": "a"\n  "provider": "anthropic"\n}', "line 3, column 3: a comma was expected"],
    ['{\n  "model": "a",\n}', "line 3, column 1: a comma before } is not allowed in JSON"],
    ["{ model: x }", "line 1, column 3: this is not a JSON value (strings need double quotes"],
    ['{ "a": 1, 2 }', "line 1, column 11: a property name in double quotes was expected"],
    ['{ "a": tru }', "line 1, column 8: this is not a JSON value"],
    ['{ "a": 1 // note\n}', "line 1, column 10: comments are not allowed in JSON"],
    ['{ "a": "x', "line 1, column 8: a string is not closed"],
    ['{ "a": [1, 2 }', "line 1, column 14: a comma was expected"],
    ["  ", "the text is empty"],
  ])("%j → %s", async (text, expected) => {
    expect(await describeJsonError(text)).toContain(expected);
  });
});
