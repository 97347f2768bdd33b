import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sampleCorpus } from "@unforget/testing/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listFiles, named, optimised, reference } from "./__fixtures__/reference-text-features.ts";
import { collectTextFeatures, TEXT_FEATURE_COUNT } from "./text-features.ts";

// The optimised scanner against the plain reference scanner (./__fixtures__/reference-text-features.ts): the same
// counts on every input, so the optimisation cannot change any estimate. text-features.eval.test.ts compares
// them on the third-party corpus's texts too.

/** Pieces chosen to hit every class and every transition: runs, case changes, opaque runs, surrogates, CRLF. */
const PIECES = [
  "a",
  "z",
  "A",
  "Z",
  "é",
  "ß",
  "ÿ",
  "0",
  "5",
  "9",
  " ",
  "  ",
  "\t",
  "\n",
  "\r",
  "\r\n",
  ".",
  '"',
  "_",
  "{",
  "\u0000",
  "\u007f",
  "@",
  "[",
  "`",
  "漢",
  "字",
  "か",
  "ア",
  "。",
  "，",
  "ａ",
  "😀",
  "\ud800",
  "\udc00",
  "\udbff",
  "─",
  "“",
  "→",
  "ж",
  "א",
  "\u0301",
  "ᓺ",
  "㐀",
  "한",
  "\uffff",
  "abcdefghijkl",
  "ABCDEFGH",
  "0123456789",
  "d316759c281bf925",
  "x1y2z3",
  "internationalization",
  "fooBar",
  "HTTPServer",
  "1,234,567",
  "    ",
  "\n\n\n",
];

const pieceStrings = fc.array(fc.constantFrom(...PIECES), { maxLength: 80 }).map((pieces) => pieces.join(""));

describe("collectTextFeatures (optimised) against the reference scanner", () => {
  it("gives the same counts on strings built from class-boundary pieces", () => {
    fc.assert(
      fc.property(pieceStrings, (text) => {
        expect(named(optimised(text))).toEqual(named(reference(text)));
      }),
      { numRuns: 3_000 },
    );
  });

  it("classes every code unit of the BMP as the reference does (the table is filled by ranges)", () => {
    const mismatches: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      // Between two letters, so that a code unit's class shows in runs and switches as well as in its own count.
      const text = `a${String.fromCharCode(code)}b`;
      const got = optimised(text);
      const want = reference(text);
      if (got.some((value, index) => value !== want[index])) mismatches.push(code.toString(16));
    }
    expect(mismatches).toEqual([]);
  });

  it("gives the same counts on arbitrary UTF-16 strings, lone surrogates included", () => {
    for (const unit of ["binary", "grapheme", "grapheme-composite", "binary-ascii"] as const) {
      fc.assert(
        fc.property(fc.string({ unit, maxLength: 200 }), (text) => {
          expect(named(optimised(text))).toEqual(named(reference(text)));
        }),
        { numRuns: 500 },
      );
    }
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 200 }), (codes) => {
        const text = String.fromCharCode(...codes);
        expect(named(optimised(text))).toEqual(named(reference(text)));
      }),
      { numRuns: 500 },
    );
    // 2,500 cases: about 5 s on an idle core, past 30 s on a CI machine shared by other jobs.
  }, 90_000);

  it("adds into the caller's array instead of overwriting it", () => {
    fc.assert(
      fc.property(pieceStrings, pieceStrings, (head, tail) => {
        const into = new Float64Array(TEXT_FEATURE_COUNT);
        collectTextFeatures(head, into);
        collectTextFeatures(tail, into);
        const expected = reference(head).map((value, index) => value + reference(tail)[index]!);
        expect(named(into)).toEqual(named(expected));
      }),
    );
  });

  it("gives the same counts on every text file of the sample corpus", () => {
    const files = listFiles(join(sampleCorpus().dir, "text"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(named(optimised(text)), file).toEqual(named(reference(text)));
    }
  });
});
