/**
 * Character-class features of a text, the inputs of the fitted linear token model. The same scanner is used
 * at run time (`estimateTextTokens`) and by the offline fitting script (`bench/fit.ts`), so fitted weights and
 * counted features always agree.
 */

/** Names of the features, in the order `collectTextFeatures` writes them. */
export const TEXT_FEATURE_NAMES = [
  "letters",
  "words",
  "caseChanges",
  "digits",
  "digitRuns",
  "punctuation",
  "punctuationRuns",
  "spaces",
  "whitespaceRuns",
  "newlines",
  "latinExtended",
  "cjk",
  "otherNonAscii",
  "astral",
  "upperLetters",
  "longWordLetters",
  "alphanumericSwitches",
  "kana",
  "cjkPunctuation",
] as const;

export type TextFeatureName = (typeof TEXT_FEATURE_NAMES)[number];

export const TEXT_FEATURE_COUNT = TEXT_FEATURE_NAMES.length;

const LETTERS = 0;
const WORDS = 1;
const CASE_CHANGES = 2;
const DIGITS = 3;
const DIGIT_RUNS = 4;
const PUNCTUATION = 5;
const PUNCTUATION_RUNS = 6;
const SPACES = 7;
const WHITESPACE_RUNS = 8;
const NEWLINES = 9;
const LATIN_EXTENDED = 10;
const CJK = 11;
const OTHER_NON_ASCII = 12;
const ASTRAL = 13;
const UPPER_LETTERS = 14;
const LONG_WORD_LETTERS = 15;
const ALPHANUMERIC_SWITCHES = 16;
const KANA = 17;
const CJK_PUNCTUATION = 18;

/** Letters of a word beyond this many cost extra: long words and identifiers split into several tokens. */
const LONG_WORD_START = 8;

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
    (code >= 0x2e80 && code <= 0x9fff) || // radicals, CJK punctuation, kana, Hangul jamo, ext. A, unified ideographs
    (code >= 0xac00 && code <= 0xd7af) || // Hangul syllables
    (code >= 0xf900 && code <= 0xfaff) || // compatibility ideographs
    (code >= 0xff00 && code <= 0xffef) // half- and full-width forms
  );
}

/**
 * Scans `text` once and adds its feature counts into `into` (length ≥ `TEXT_FEATURE_COUNT`), which the caller
 * zeroes. Allocates nothing; linear in the text length.
 */
export function collectTextFeatures(text: string, into: Float64Array): void {
  let previousClass = CLASS_NONE;
  let previousCode = 0;
  let wordLength = 0;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      const lower = code | 0x20;
      if (lower >= 0x61 && lower <= 0x7a) {
        into[LETTERS]! += 1;
        if (code <= 0x5a) into[UPPER_LETTERS]! += 1;
        if (previousClass !== CLASS_LETTER) {
          into[WORDS]! += 1;
          if (previousClass === CLASS_DIGIT) into[ALPHANUMERIC_SWITCHES]! += 1;
          wordLength = 0;
        } else if (code <= 0x5a && previousCode >= 0x61) into[CASE_CHANGES]! += 1;
        wordLength++;
        if (wordLength > LONG_WORD_START) into[LONG_WORD_LETTERS]! += 1;
        previousClass = CLASS_LETTER;
      } else if (code >= 0x30 && code <= 0x39) {
        into[DIGITS]! += 1;
        if (previousClass !== CLASS_DIGIT) {
          into[DIGIT_RUNS]! += 1;
          if (previousClass === CLASS_LETTER) into[ALPHANUMERIC_SWITCHES]! += 1;
        }
        previousClass = CLASS_DIGIT;
      } else if (code === 0x20 || code === 0x09 || code === 0x0d) {
        into[SPACES]! += 1;
        if (previousClass !== CLASS_SPACE) into[WHITESPACE_RUNS]! += 1;
        previousClass = CLASS_SPACE;
      } else if (code === 0x0a) {
        into[NEWLINES]! += 1;
        previousClass = CLASS_NEWLINE;
      } else {
        into[PUNCTUATION]! += 1;
        if (previousClass !== CLASS_PUNCTUATION) into[PUNCTUATION_RUNS]! += 1;
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
    } else {
      into[OTHER_NON_ASCII]! += 1;
      previousClass = CLASS_WIDE;
    }
    previousCode = code;
  }
}
