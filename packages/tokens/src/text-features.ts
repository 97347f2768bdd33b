/**
 * Character-class features of a text, the inputs of the fitted linear token model. The same scanner is used
 * at run time (`estimateTextTokens`) and by the offline fitting script (`bench/fit.ts`), so fitted weights and
 * counted features always agree.
 *
 * Every feature only ever grows while the scanner moves forward (a character adds to features chosen by what
 * came before it, never revises earlier counts), so with non-negative weights appending text can never lower
 * the estimate.
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
  "digitGroups",
  "digitRunsAfterSpace",
  "attachedWords",
  "newlineRuns",
  "indentRuns",
  "opaqueCharacters",
  "rareScript",
  "capitalRunLetters",
  "symbols",
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
/** Digits in groups of three: BPE pre-tokenizers split long numbers into runs of at most three digits. */
const DIGIT_GROUPS = 19;
/** A number right after a space or tab: the space cannot join the number and becomes a token of its own. */
const DIGIT_RUNS_AFTER_SPACE = 20;
/** Words that start right after a single punctuation mark (`"key`, `_name`, `.method`): the mark joins the word. */
const ATTACHED_WORDS = 21;
/** Runs of line breaks (`\n`, `\r\n`, blank lines): one token each, whatever their length. */
const NEWLINE_RUNS = 22;
/** Runs of two or more spaces or tabs (indentation, column padding). */
const INDENT_RUNS = 23;
/** Characters of long mixed letter-and-digit runs (hashes, hex, base64, ids) beyond the first `OPAQUE_START`. */
const OPAQUE_CHARACTERS = 24;
/** Characters of rarely trained scripts (three UTF-8 bytes outside CJK and kana, CJK extension A): byte tokens. */
const RARE_SCRIPT = 25;
/** Capital letters following a capital letter (acronyms, upper-case text, upper-case hex). */
const CAPITAL_RUN_LETTERS = 26;
/** General punctuation, arrows, box drawing, math and other symbols (U+2000–U+2BFF): “ ” – … → ─ ✓. */
const SYMBOLS = 27;

/** Letters of a word beyond this many cost extra: long words and identifiers split into several tokens. */
const LONG_WORD_START = 8;
/** A letter-and-digit run longer than this that mixes letters and digits is treated as opaque data. */
const OPAQUE_START = 12;

// Classes of a UTF-16 code unit, looked up in CODE_UNIT_CLASSES (one entry per code unit of the BMP).
const UNIT_LOWER = 0;
const UNIT_UPPER = 1;
const UNIT_DIGIT = 2;
/** Space or tab. */
const UNIT_SPACE = 3;
const UNIT_LINE_FEED = 4;
const UNIT_CARRIAGE_RETURN = 5;
/** Every other ASCII code unit: punctuation, symbols and control characters. */
const UNIT_PUNCTUATION = 6;
/** U+0080–U+02FF: accented Latin letters, which mostly merge into the surrounding word. */
const UNIT_LATIN_EXTENDED = 7;
/** U+D800–U+DBFF: first half of a surrogate pair, one astral code point (emoji, rare ideographs). */
const UNIT_HIGH_SURROGATE = 8;
const UNIT_CJK_PUNCTUATION = 9;
const UNIT_KANA = 10;
const UNIT_CJK = 11;
const UNIT_SYMBOL = 12;
/** Other two-byte scripts (Greek, Cyrillic, Hebrew, Arabic, …) and combining marks. */
const UNIT_OTHER_NON_ASCII = 13;
const UNIT_RARE_SCRIPT = 14;

/**
 * Class of every UTF-16 code unit (64 KiB): one array read per character in the hot loop. Filled at load by ranges,
 * from the lowest precedence to the highest (a later fill wins), which costs microseconds where classifying the
 * 65,536 code units one by one cost milliseconds of every process's start-up. The precedence, highest first:
 * ASCII classes; high surrogates; Latin extended (U+0080–U+02FF); CJK punctuation (U+3000–U+303F, full-width
 * forms U+FF00–U+FFEF); kana; CJK (radicals to CJK symbols U+2E80–U+33FF, unified ideographs, Hangul syllables,
 * compatibility ideographs); symbols (U+2000–U+2BFF); other scripts below U+0800; rare scripts.
 * `text-features.test.ts` checks every code unit against the reference scanner's branch chain.
 */
const CODE_UNIT_CLASSES = new Uint8Array(0x10000).fill(UNIT_RARE_SCRIPT);
CODE_UNIT_CLASSES.fill(UNIT_OTHER_NON_ASCII, 0x80, 0x800);
CODE_UNIT_CLASSES.fill(UNIT_SYMBOL, 0x2000, 0x2c00);
for (const [start, end] of [
  [0x2e80, 0x3400],
  [0x4e00, 0xa000],
  [0xac00, 0xd7b0],
  [0xf900, 0xfb00],
] as const)
  CODE_UNIT_CLASSES.fill(UNIT_CJK, start, end);
CODE_UNIT_CLASSES.fill(UNIT_KANA, 0x3040, 0x3100);
CODE_UNIT_CLASSES.fill(UNIT_CJK_PUNCTUATION, 0x3000, 0x3040);
CODE_UNIT_CLASSES.fill(UNIT_CJK_PUNCTUATION, 0xff00, 0xfff0);
CODE_UNIT_CLASSES.fill(UNIT_LATIN_EXTENDED, 0x80, 0x300);
CODE_UNIT_CLASSES.fill(UNIT_HIGH_SURROGATE, 0xd800, 0xdc00);
CODE_UNIT_CLASSES.fill(UNIT_PUNCTUATION, 0, 0x80);
CODE_UNIT_CLASSES.fill(UNIT_DIGIT, 0x30, 0x3a);
CODE_UNIT_CLASSES.fill(UNIT_UPPER, 0x41, 0x5b);
CODE_UNIT_CLASSES.fill(UNIT_LOWER, 0x61, 0x7b);
CODE_UNIT_CLASSES[0x20] = UNIT_SPACE;
CODE_UNIT_CLASSES[0x09] = UNIT_SPACE;
CODE_UNIT_CLASSES[0x0a] = UNIT_LINE_FEED;
CODE_UNIT_CLASSES[0x0d] = UNIT_CARRIAGE_RETURN;

// What the previous character was, for run detection. The letter states come first and the digit state right
// after them, so "previous was a letter" is `previous <= STATE_LATIN_LETTER` and "previous was a letter or a
// digit" is `previous <= STATE_DIGIT` (STATE_NONE is the largest).
const STATE_UPPER = 0;
const STATE_LOWER = 1;
/** An accented Latin letter: continues a word but is neither upper- nor lower-case for case changes. */
const STATE_LATIN_LETTER = 2;
const STATE_DIGIT = 3;
const STATE_PUNCTUATION = 4;
const STATE_SPACE = 5;
const STATE_NEWLINE = 6;
/** CJK, kana, symbols, other scripts, astral code points. */
const STATE_WIDE = 7;
const STATE_NONE = 8;

/**
 * Scans `text` once and adds its feature counts into `into` (length ≥ `TEXT_FEATURE_COUNT`), which the caller
 * zeroes. Allocates nothing; linear in the text length.
 *
 * Written for speed (it is the estimator's whole cost): one table read per character, one branch chain on the
 * class (most frequent classes first) per run of characters, counts kept in local variables and added into
 * `into` once at the end. `text-features.test.ts` checks that it counts exactly like a plain reference scanner,
 * on generated strings and on the corpus texts.
 */
export function collectTextFeatures(text: string, into: Float64Array): void {
  let letters = 0;
  let words = 0;
  let caseChanges = 0;
  let digits = 0;
  let digitRuns = 0;
  let punctuation = 0;
  let punctuationRuns = 0;
  let spaces = 0;
  let whitespaceRuns = 0;
  let newlines = 0;
  let latinExtended = 0;
  let cjk = 0;
  let otherNonAscii = 0;
  let astral = 0;
  let upperLetters = 0;
  let longWordLetters = 0;
  let alphanumericSwitches = 0;
  let kana = 0;
  let cjkPunctuation = 0;
  let digitGroups = 0;
  let digitRunsAfterSpace = 0;
  let attachedWords = 0;
  let newlineRuns = 0;
  let indentRuns = 0;
  let opaqueCharacters = 0;
  let rareScript = 0;
  let capitalRunLetters = 0;
  let symbols = 0;

  let previous = STATE_NONE;
  let wordLength = 0;
  let digitLength = 0;
  /** Length of the punctuation run just before the current character (runs are consumed whole). */
  let punctuationLength = 0;
  // Current run of letters and digits: its length and whether it mixed letters and digits.
  let alphanumericLength = 0;
  let alphanumericMixed = false;
  const classes = CODE_UNIT_CLASSES;
  const length = text.length;
  // Runs of spaces, punctuation, line breaks and CJK are consumed whole by an inner loop, and so is the rest of a
  // lower-case or digit run once its first character is counted: the branch chain runs once per run, not per
  // character. So it never sees a character of the same space, punctuation or line-break run as the previous one.
  // Each code unit is read once: the loop that ends a run leaves the class of the character after it in `unit`.
  let index = 0;
  let unit = length === 0 ? UNIT_LOWER : classes[text.charCodeAt(0)]!;
  while (index < length) {
    if (unit === UNIT_LOWER) {
      if (previous <= STATE_DIGIT) {
        if (previous === STATE_DIGIT) alphanumericMixed = true;
      } else {
        alphanumericLength = 0;
        alphanumericMixed = false;
      }
      alphanumericLength++;
      if (alphanumericMixed && alphanumericLength > OPAQUE_START) {
        // Inside a long hash-like run: the letter/digit/case structure no longer predicts tokens.
        opaqueCharacters++;
      } else {
        letters++;
        if (previous > STATE_LATIN_LETTER) {
          if (previous === STATE_PUNCTUATION && punctuationLength === 1) attachedWords++;
          else words++;
          if (previous === STATE_DIGIT) alphanumericSwitches++;
          wordLength = 0;
        }
        wordLength++;
        if (wordLength > LONG_WORD_START) longWordLetters++;
      }
      previous = STATE_LOWER;
      // The rest of the lower-case run: each letter continues the word, until a mixed run turns opaque.
      let end = index + 1;
      while (end < length) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit !== UNIT_LOWER) break;
        end++;
      }
      const rest = end - index - 1;
      if (rest > 0) {
        let plain = rest;
        if (alphanumericMixed) {
          plain = OPAQUE_START - alphanumericLength;
          if (plain < 0) plain = 0;
          else if (plain > rest) plain = rest;
          opaqueCharacters += rest - plain;
        }
        alphanumericLength += rest;
        letters += plain;
        wordLength += plain;
        const beyond = wordLength - LONG_WORD_START;
        if (beyond > 0) longWordLetters += Math.min(beyond, plain);
      }
      index = end;
    } else if (unit === UNIT_SPACE) {
      let end = index + 1;
      while (end < length) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit !== UNIT_SPACE) break;
        end++;
      }
      spaces += end - index;
      whitespaceRuns++;
      if (end - index >= 2) indentRuns++;
      previous = STATE_SPACE;
      index = end;
    } else if (unit === UNIT_PUNCTUATION) {
      let end = index + 1;
      while (end < length) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit !== UNIT_PUNCTUATION) break;
        end++;
      }
      punctuationLength = end - index;
      punctuation += punctuationLength;
      punctuationRuns++;
      previous = STATE_PUNCTUATION;
      index = end;
    } else if (unit === UNIT_DIGIT) {
      if (previous <= STATE_DIGIT) {
        if (previous !== STATE_DIGIT) alphanumericMixed = true;
      } else {
        alphanumericLength = 0;
        alphanumericMixed = false;
      }
      alphanumericLength++;
      if (alphanumericMixed && alphanumericLength > OPAQUE_START) {
        opaqueCharacters++;
      } else {
        digits++;
        if (previous !== STATE_DIGIT) {
          digitRuns++;
          if (previous <= STATE_LATIN_LETTER) alphanumericSwitches++;
          else if (previous === STATE_SPACE) digitRunsAfterSpace++;
          digitLength = 0;
        }
        if (digitLength % 3 === 0) digitGroups++;
        digitLength++;
      }
      previous = STATE_DIGIT;
      // The rest of the digit run: a new group of three starts at every digit whose index in the run is a
      // multiple of three, until a mixed run turns opaque.
      let end = index + 1;
      while (end < length) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit !== UNIT_DIGIT) break;
        end++;
      }
      const rest = end - index - 1;
      if (rest > 0) {
        let plain = rest;
        if (alphanumericMixed) {
          plain = OPAQUE_START - alphanumericLength;
          if (plain < 0) plain = 0;
          else if (plain > rest) plain = rest;
          opaqueCharacters += rest - plain;
        }
        alphanumericLength += rest;
        digits += plain;
        // Multiples of three in [digitLength, digitLength + plain − 1].
        digitGroups += (((digitLength + plain + 2) / 3) | 0) - (((digitLength + 2) / 3) | 0);
        digitLength += plain;
      }
      index = end;
    } else if (unit === UNIT_UPPER) {
      if (previous <= STATE_DIGIT) {
        if (previous === STATE_DIGIT) alphanumericMixed = true;
      } else {
        alphanumericLength = 0;
        alphanumericMixed = false;
      }
      alphanumericLength++;
      if (alphanumericMixed && alphanumericLength > OPAQUE_START) {
        opaqueCharacters++;
      } else {
        letters++;
        upperLetters++;
        if (previous === STATE_UPPER) capitalRunLetters++;
        if (previous > STATE_LATIN_LETTER) {
          if (previous === STATE_PUNCTUATION && punctuationLength === 1) attachedWords++;
          else words++;
          if (previous === STATE_DIGIT) alphanumericSwitches++;
          wordLength = 0;
        } else if (previous !== STATE_UPPER) caseChanges++;
        wordLength++;
        if (wordLength > LONG_WORD_START) longWordLetters++;
      }
      previous = STATE_UPPER;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_LINE_FEED || unit === UNIT_CARRIAGE_RETURN) {
      newlineRuns++;
      let end = index;
      for (; end < length; end++) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit === UNIT_LINE_FEED) newlines++;
        else if (unit !== UNIT_CARRIAGE_RETURN) break;
      }
      previous = STATE_NEWLINE;
      index = end;
    } else if (unit === UNIT_CJK) {
      let end = index + 1;
      while (end < length) {
        unit = classes[text.charCodeAt(end)]!;
        if (unit !== UNIT_CJK) break;
        end++;
      }
      cjk += end - index;
      previous = STATE_WIDE;
      index = end;
    } else if (unit === UNIT_LATIN_EXTENDED) {
      latinExtended++;
      if (previous > STATE_LATIN_LETTER) {
        words++;
        wordLength = 0;
      }
      previous = STATE_LATIN_LETTER;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_HIGH_SURROGATE) {
      // A surrogate pair is one astral code point: count it once and skip its second half.
      astral++;
      previous = STATE_WIDE;
      index += 2;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_CJK_PUNCTUATION) {
      cjkPunctuation++;
      previous = STATE_WIDE;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_KANA) {
      kana++;
      previous = STATE_WIDE;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_SYMBOL) {
      symbols++;
      previous = STATE_WIDE;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else if (unit === UNIT_OTHER_NON_ASCII) {
      otherNonAscii++;
      previous = STATE_WIDE;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    } else {
      rareScript++;
      previous = STATE_WIDE;
      index++;
      if (index < length) unit = classes[text.charCodeAt(index)]!;
    }
  }
  into[LETTERS]! += letters;
  into[WORDS]! += words;
  into[CASE_CHANGES]! += caseChanges;
  into[DIGITS]! += digits;
  into[DIGIT_RUNS]! += digitRuns;
  into[PUNCTUATION]! += punctuation;
  into[PUNCTUATION_RUNS]! += punctuationRuns;
  into[SPACES]! += spaces;
  into[WHITESPACE_RUNS]! += whitespaceRuns;
  into[NEWLINES]! += newlines;
  into[LATIN_EXTENDED]! += latinExtended;
  into[CJK]! += cjk;
  into[OTHER_NON_ASCII]! += otherNonAscii;
  into[ASTRAL]! += astral;
  into[UPPER_LETTERS]! += upperLetters;
  into[LONG_WORD_LETTERS]! += longWordLetters;
  into[ALPHANUMERIC_SWITCHES]! += alphanumericSwitches;
  into[KANA]! += kana;
  into[CJK_PUNCTUATION]! += cjkPunctuation;
  into[DIGIT_GROUPS]! += digitGroups;
  into[DIGIT_RUNS_AFTER_SPACE]! += digitRunsAfterSpace;
  into[ATTACHED_WORDS]! += attachedWords;
  into[NEWLINE_RUNS]! += newlineRuns;
  into[INDENT_RUNS]! += indentRuns;
  into[OPAQUE_CHARACTERS]! += opaqueCharacters;
  into[RARE_SCRIPT]! += rareScript;
  into[CAPITAL_RUN_LETTERS]! += capitalRunLetters;
  into[SYMBOLS]! += symbols;
}

// Prime the scanner at load on two short texts that take every branch, one-byte and two-byte (a few dozen
// microseconds), so the optimising compiler never compiles it with branches or string widths it has not seen yet:
// without this, a very long first text could leave a slower on-stack-replaced loop in place. V8 records type
// feedback only once a function has been called several times, hence the repetition. Pure: the counts go to a
// throw-away array. (Sliced or concatenated strings are deliberately not primed: once the loop has seen them, V8
// reads every string through its slower generic path.)
const primingTexts = [
  "Ab cdefghijk, LMN 12345\t\t x1y2z3w4v5u6t7 .e _f\r\n\n ",
  "Ab cdefghijk, LMN 12345\t\t x1y2z3w4v5u6t7 .e _f\r\n\n é漢字かな。─😀ж\u0800\ud800\u0301 ",
];
const primingCounts = new Float64Array(TEXT_FEATURE_COUNT);
for (let round = 0; round < 32; round++) {
  for (const text of primingTexts) collectTextFeatures(text, primingCounts);
}
