import { describe, expect, it } from "vitest";
import { matchesHookMatcher } from "./hook-matcher.ts";

describe("matchesHookMatcher", () => {
  it("matches everything without a matcher, with an empty one and with *", () => {
    for (const matcher of [undefined, "", "*"]) expect(matchesHookMatcher(matcher, "anything")).toBe(true);
  });

  it("matches plain names exactly, and | alternatives", () => {
    expect(matchesHookMatcher("auto", "auto")).toBe(true);
    expect(matchesHookMatcher("auto", "manual")).toBe(false);
    expect(matchesHookMatcher("Write", "WriteFile")).toBe(false);
    expect(matchesHookMatcher("Edit|Write", "Write")).toBe(true);
    expect(matchesHookMatcher("Edit|Write", "Read")).toBe(false);
  });

  it("treats other matchers as regular expressions", () => {
    expect(matchesHookMatcher("Notebook.*", "NotebookEdit")).toBe(true);
    expect(matchesHookMatcher("^mcp__github__", "mcp__github__create_issue")).toBe(true);
    expect(matchesHookMatcher("^mcp__github__", "mcp__slack__post")).toBe(false);
  });

  it("never matches with an invalid regular expression", () => {
    expect(matchesHookMatcher("(unclosed", "(unclosed")).toBe(false);
  });
});
