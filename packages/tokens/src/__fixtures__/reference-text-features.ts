import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  collectTextFeatures,
  TEXT_FEATURE_COUNT,
  TEXT_FEATURE_NAMES,
  type TextFeatureName,
} from "../text-features.ts";

// A plain reference scanner: the straightforward per-character branch chain the estimator's weights were first
// fitted with (before the table-driven, run-skipping scanner in text-features.ts). The optimised scanner must
// produce exactly the same counts on every input, so the optimisation cannot change any estimate.

// Where each feature goes in the counts, by its name (what each one counts: `text-features.ts`).
const featureIndex = (name: TextFeatureName): number => TEXT_FEATURE_NAMES.indexOf(name);
const LETTERS = featureIndex("letters");
const WORDS = featureIndex("words");
const CASE_CHANGES = featureIndex("caseChanges");
const DIGITS = featureIndex("digits");
const DIGIT_RUNS = featureIndex("digitRuns");
const PUNCTUATION = featureIndex("punctuation");
const PUNCTUATION_RUNS = featureIndex("punctuationRuns");
const SPACES = featureIndex("spaces");
const WHITESPACE_RUNS = featureIndex("whitespaceRuns");
const NEWLINES = featureIndex("newlines");
const LATIN_EXTENDED = featureIndex("latinExtended");
const CJK = featureIndex("cjk");
const OTHER_NON_ASCII = featureIndex("otherNonAscii");
const ASTRAL = featureIndex("astral");
const UPPER_LETTERS = featureIndex("upperLetters");
const LONG_WORD_LETTERS = featureIndex("longWordLetters");
const ALPHANUMERIC_SWITCHES = featureIndex("alphanumericSwitches");
const KANA = featureIndex("kana");
const CJK_PUNCTUATION = featureIndex("cjkPunctuation");
const DIGIT_GROUPS = featureIndex("digitGroups");
const DIGIT_RUNS_AFTER_SPACE = featureIndex("digitRunsAfterSpace");
const ATTACHED_WORDS = featureIndex("attachedWords");
const NEWLINE_RUNS = featureIndex("newlineRuns");
const INDENT_RUNS = featureIndex("indentRuns");
const OPAQUE_CHARACTERS = featureIndex("opaqueCharacters");
const RARE_SCRIPT = featureIndex("rareScript");
const CAPITAL_RUN_LETTERS = featureIndex("capitalRunLetters");
const SYMBOLS = featureIndex("symbols");

/** Letters of a word beyond this many cost extra: long words and identifiers split into several tokens. */
const LONG_WORD_START = 8;
/** A letter-and-digit run longer than this that mixes letters and digits is treated as opaque data. */
const OPAQUE_START = 12;

// Previous character class, for run detection.
const CLASS_NONE = 0;
const CLASS_LETTER = 1;
const CLASS_DIGIT = 2;
const CLASS_PUNCTUATION = 3;
const CLASS_SPACE = 4;
const CLASS_NEWLINE = 5;
const CLASS_WIDE = 6;

function isCjk(code: number): boolean {
  return (
    (code >= 0x2e80 && code <= 0x33ff) || // radicals, CJK punctuation, kana, Hangul jamo, CJK symbols
    (code >= 0x4e00 && code <= 0x9fff) || // unified ideographs
    (code >= 0xac00 && code <= 0xd7af) || // Hangul syllables
    (code >= 0xf900 && code <= 0xfaff) || // compatibility ideographs
    (code >= 0xff00 && code <= 0xffef) // half- and full-width forms
  );
}

/** The reference: one branch chain per character, counts written straight into `into`. */
function referenceTextFeatures(text: string, into: Float64Array): void {
  let previousClass = CLASS_NONE;
  let previousCode = 0;
  let wordLength = 0;
  let digitLength = 0;
  let punctuationLength = 0;
  let whitespaceLength = 0;
  // Current run of ASCII letters and digits: its length and whether it mixed letters and digits.
  let alphanumericLength = 0;
  let alphanumericMixed = false;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      const lower = code | 0x20;
      const isLetter = lower >= 0x61 && lower <= 0x7a;
      const isDigit = code >= 0x30 && code <= 0x39;
      if (isLetter || isDigit) {
        if (previousClass !== CLASS_LETTER && previousClass !== CLASS_DIGIT) {
          alphanumericLength = 0;
          alphanumericMixed = false;
        } else if ((previousClass === CLASS_DIGIT) === isLetter) {
          alphanumericMixed = true;
        }
        alphanumericLength++;
        if (alphanumericMixed && alphanumericLength > OPAQUE_START) {
          // Inside a long hash-like run: the letter/digit/case structure no longer predicts tokens.
          into[OPAQUE_CHARACTERS]! += 1;
          previousClass = isLetter ? CLASS_LETTER : CLASS_DIGIT;
          previousCode = code;
          continue;
        }
      }
      if (isLetter) {
        into[LETTERS]! += 1;
        const upper = code <= 0x5a;
        if (upper) {
          into[UPPER_LETTERS]! += 1;
          if (previousClass === CLASS_LETTER && previousCode <= 0x5a) into[CAPITAL_RUN_LETTERS]! += 1;
        }
        if (previousClass !== CLASS_LETTER) {
          if (previousClass === CLASS_PUNCTUATION && punctuationLength === 1) into[ATTACHED_WORDS]! += 1;
          else into[WORDS]! += 1;
          if (previousClass === CLASS_DIGIT) into[ALPHANUMERIC_SWITCHES]! += 1;
          wordLength = 0;
        } else if (upper && previousCode >= 0x61) into[CASE_CHANGES]! += 1;
        wordLength++;
        if (wordLength > LONG_WORD_START) into[LONG_WORD_LETTERS]! += 1;
        previousClass = CLASS_LETTER;
      } else if (isDigit) {
        into[DIGITS]! += 1;
        if (previousClass !== CLASS_DIGIT) {
          into[DIGIT_RUNS]! += 1;
          if (previousClass === CLASS_LETTER) into[ALPHANUMERIC_SWITCHES]! += 1;
          if (previousClass === CLASS_SPACE) into[DIGIT_RUNS_AFTER_SPACE]! += 1;
          digitLength = 0;
        }
        if (digitLength % 3 === 0) into[DIGIT_GROUPS]! += 1;
        digitLength++;
        previousClass = CLASS_DIGIT;
      } else if (code === 0x20 || code === 0x09) {
        into[SPACES]! += 1;
        if (previousClass !== CLASS_SPACE) {
          into[WHITESPACE_RUNS]! += 1;
          whitespaceLength = 0;
        }
        whitespaceLength++;
        if (whitespaceLength === 2) into[INDENT_RUNS]! += 1;
        previousClass = CLASS_SPACE;
      } else if (code === 0x0a || code === 0x0d) {
        if (code === 0x0a) into[NEWLINES]! += 1;
        if (previousClass !== CLASS_NEWLINE) into[NEWLINE_RUNS]! += 1;
        previousClass = CLASS_NEWLINE;
      } else {
        into[PUNCTUATION]! += 1;
        if (previousClass !== CLASS_PUNCTUATION) {
          into[PUNCTUATION_RUNS]! += 1;
          punctuationLength = 0;
        }
        punctuationLength++;
        previousClass = CLASS_PUNCTUATION;
      }
    } else if (code >= 0xd800 && code <= 0xdbff) {
      // A surrogate pair is one astral code point (emoji, rare ideographs): count it once.
      into[ASTRAL]! += 1;
      index++;
      previousClass = CLASS_WIDE;
    } else if (code < 0x300) {
      // Accented Latin letters mostly merge into the surrounding word.
      into[LATIN_EXTENDED]! += 1;
      if (previousClass !== CLASS_LETTER) {
        into[WORDS]! += 1;
        wordLength = 0;
      }
      previousClass = CLASS_LETTER;
    } else if ((code >= 0x3000 && code <= 0x303f) || (code >= 0xff00 && code <= 0xffef)) {
      into[CJK_PUNCTUATION]! += 1;
      previousClass = CLASS_WIDE;
    } else if (code >= 0x3040 && code <= 0x30ff) {
      into[KANA]! += 1;
      previousClass = CLASS_WIDE;
    } else if (isCjk(code)) {
      into[CJK]! += 1;
      previousClass = CLASS_WIDE;
    } else if (code >= 0x2000 && code <= 0x2bff) {
      into[SYMBOLS]! += 1;
      previousClass = CLASS_WIDE;
    } else if (code < 0x800) {
      // Two-byte scripts (Greek, Cyrillic, Hebrew, Arabic, …) and combining marks.
      into[OTHER_NON_ASCII]! += 1;
      previousClass = CLASS_WIDE;
    } else {
      into[RARE_SCRIPT]! += 1;
      previousClass = CLASS_WIDE;
    }
    previousCode = code;
  }
}

export function reference(text: string): Float64Array {
  const into = new Float64Array(TEXT_FEATURE_COUNT);
  referenceTextFeatures(text, into);
  return into;
}

export function optimised(text: string): Float64Array {
  const into = new Float64Array(TEXT_FEATURE_COUNT);
  collectTextFeatures(text, into);
  return into;
}

export function named(features: Float64Array): Record<string, number> {
  return Object.fromEntries(TEXT_FEATURE_NAMES.map((name, index) => [name, features[index]!]));
}

/** Every file under `directory`, sorted, recursively. */
export function listFiles(directory: string): string[] {
  return readdirSync(directory)
    .sort()
    .flatMap((name) => {
      const path = join(directory, name);
      return statSync(path).isDirectory() ? listFiles(path) : [path];
    });
}
