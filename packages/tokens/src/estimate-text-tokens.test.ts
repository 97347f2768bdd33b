import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateTextTokens } from "./estimate-text-tokens.ts";
import { collectTextFeatures, TEXT_FEATURE_COUNT, TEXT_FEATURE_NAMES } from "./text-features.ts";

function features(text: string): Record<string, number> {
  const into = new Float64Array(TEXT_FEATURE_COUNT);
  collectTextFeatures(text, into);
  return Object.fromEntries(TEXT_FEATURE_NAMES.map((name, index) => [name, into[index]!]));
}

describe("collectTextFeatures", () => {
  it("counts words, case changes, digits, punctuation and whitespace runs", () => {
    const counted = features("fooBar 123, x  y\n");
    expect(counted).toMatchObject({
      letters: 8,
      words: 3,
      caseChanges: 1,
      upperLetters: 1,
      digits: 3,
      digitRuns: 1,
      punctuation: 1,
      punctuationRuns: 1,
      newlines: 1,
      spaces: 4,
      whitespaceRuns: 3,
    });
  });

  it("separates CJK ideographs, kana, CJK punctuation, accented Latin, other scripts and astral symbols", () => {
    expect(features("漢字かな。éжא😀")).toMatchObject({
      cjk: 2,
      kana: 2,
      cjkPunctuation: 1,
      latinExtended: 1,
      otherNonAscii: 2,
      astral: 1,
    });
  });

  it("counts BPE-relevant patterns: digit groups, attached words, line-break runs, indentation, opaque runs", () => {
    expect(features("1234567 x 42")).toMatchObject({ digitGroups: 4, digitRuns: 2, digitRunsAfterSpace: 1 });
    expect(features('a.b _c "d {"e')).toMatchObject({ attachedWords: 3, words: 2, punctuationRuns: 4 });
    expect(features("a\r\n\r\nb\n    c")).toMatchObject({ newlineRuns: 2, newlines: 3, indentRuns: 1 });
    const hash = "d316759c281bf925d600be698a4973d5";
    expect(features(hash).opaqueCharacters).toBe(hash.length - 12);
    expect(features("internationalization").opaqueCharacters).toBe(0);
    expect(features("ᓺ㜽“—”─")).toMatchObject({ rareScript: 2, symbols: 4 });
  });

  it("counts letters beyond the eighth of a word as long-word letters", () => {
    expect(features("internationalization").longWordLetters).toBe("internationalization".length - 8);
  });
});

describe("estimateTextTokens", () => {
  it("is zero for empty text and positive for any non-empty text", () => {
    expect(estimateTextTokens("")).toBe(0);
    for (const profile of ["claude", "o200k", "cl100k"] as const) {
      for (const text of [" ", "\t", "  "])
        expect(estimateTextTokens(text, profile), JSON.stringify(text)).toBe(1);
    }
    fc.assert(fc.property(fc.string({ minLength: 1 }), (text) => estimateTextTokens(text) > 0));
  });

  it("never decreases when text is appended (monotonic)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (head, tail) => {
        for (const profile of ["claude", "o200k", "cl100k"] as const) {
          expect(estimateTextTokens(head + tail, profile)).toBeGreaterThanOrEqual(
            estimateTextTokens(head, profile),
          );
        }
      }),
    );
  });

  it("is content-aware: dense CJK costs more per character than English prose", () => {
    const english = "The quick brown fox jumps over the lazy dog near the river bank today. ".repeat(10);
    const chinese = "我们今天在河边看到一只敏捷的棕色狐狸跳过了懒惰的狗。".repeat(10);
    expect(estimateTextTokens(chinese) / chinese.length).toBeGreaterThan(
      3 * (estimateTextTokens(english) / english.length),
    );
  });

  it("lands near known tokenizer counts for plain English (about 4 to 5 characters per token)", () => {
    const text = "It was the best of times, it was the worst of times, it was the age of wisdom. ".repeat(20);
    const charactersPerToken = text.length / estimateTextTokens(text);
    expect(charactersPerToken).toBeGreaterThan(3.5);
    expect(charactersPerToken).toBeLessThan(5.5);
  });

  it("is linear: doubling a long text roughly doubles the estimate", () => {
    const text = "const value = compute(items[index], 42);\n".repeat(200);
    const single = estimateTextTokens(text);
    const double = estimateTextTokens(text + text);
    expect(double).toBeGreaterThanOrEqual(2 * single - 2);
    expect(double).toBeLessThanOrEqual(2 * single + 2);
  });
});
