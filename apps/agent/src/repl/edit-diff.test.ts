import { describe, expect, it } from "vitest";
import { describeDiff, editDiff, foldDiff } from "./edit-diff.ts";

/** A result in the Edit tool's words: the changed lines quoted with their numbers, some context around them. */
const quoted = (from: number, lines: string[]) =>
  `Edited src/a.js. The changed lines now read:\n${lines.map((line, index) => `${String(from + index).padStart(6)}\t${line}`).join("\n")}`;

describe("editDiff", () => {
  it("puts the removed and added lines first, numbered from where the result quotes the new text", () => {
    const output = quoted(5, ["  return 2;", "}", "function c() {", "  return 33;", "}"]);
    const diff = editDiff({ old_string: "  return 3;", new_string: "  return 33;" }, output);
    expect(diff?.lines).toEqual([
      { kind: "removed", line: 8, text: "  return 3;" },
      { kind: "added", line: 8, text: "  return 33;" },
    ]);
    expect(describeDiff(diff!)).toBe("1 line added, 1 removed");
  });

  it("shows whole lines, indentation kept, when the strings begin and end inside them", () => {
    const output = quoted(5, ["  return 2;", "}", "function c() {", "  return 33;", "}"]);
    const diff = editDiff({ old_string: "return 3;", new_string: "return 33;" }, output);
    expect(diff?.lines).toEqual([
      { kind: "removed", line: 8, text: "  return 3;" },
      { kind: "added", line: 8, text: "  return 33;" },
    ]);
  });

  it("numbers the lines of a longer replacement, shared lines as context", () => {
    const output = quoted(1, ["a", "b2", "b3", "c"]);
    const diff = editDiff({ old_string: "a\nb\nc", new_string: "a\nb2\nb3\nc" }, output)!;
    expect(diff.lines.map((line) => `${line.line}${line.kind[0]} ${line.text}`)).toEqual([
      "1c a",
      "2r b",
      "2a b2",
      "3a b3",
      "4c c",
    ]);
    expect(describeDiff(diff)).toBe("2 lines added, 1 removed");
  });

  it("has no numbers where the result quotes nothing (replace_all), and says how many places", () => {
    const diff = editDiff(
      { old_string: "foo", new_string: "bar", replace_all: true },
      "Edited src/a.js: replaced 3 occurrences.",
    )!;
    expect(diff.lines.every((line) => line.line === undefined)).toBe(true);
    expect(describeDiff(diff)).toBe("1 line added, 1 removed in each of 3 places");
  });

  it("draws a deletion, and nothing for an input that is not an edit", () => {
    const diff = editDiff({ old_string: "gone\n", new_string: "" }, "Edited src/a.js.")!;
    expect(diff.lines).toEqual([{ kind: "removed", line: undefined, text: "gone" }]);
    expect(describeDiff(diff)).toBe("1 line removed");
    expect(editDiff({ command: "ls" }, "a\nb")).toBeUndefined();
  });

  it("folds long unchanged stretches away and keeps the changes", () => {
    const before = Array.from({ length: 20 }, (_, index) => `line ${index}`);
    const after = before.map((line, index) => (index === 10 ? "changed" : line));
    const diff = editDiff({ old_string: before.join("\n"), new_string: after.join("\n") }, "")!;
    const { shown, more } = foldDiff(diff, 10);
    expect(shown.map((line) => line.text)).toEqual(["line 9", "line 10", "changed", "line 11"]);
    expect(more).toBe(0);
  });
});
