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
 * One scan in progress: the text, the counts it adds into, the class of the character at the scan's position,
 * and what the characters before it left for run detection. One object serves every scan (a scan never starts
 * another), so scanning allocates nothing.
 */
interface FeatureScan {
  text: string;
  length: number;
  counts: Float64Array;
  /** Class of the code unit at the index the next collector starts at. */
  unit: number;
  /** What the previous character was (a `STATE_…`). */
  previous: number;
  wordLength: number;
  digitLength: number;
  /** Length of the punctuation run just before the current character (runs are consumed whole). */
  punctuationLength: number;
  // Current run of letters and digits: its length and whether it mixed letters and digits.
  alphanumericLength: number;
  alphanumericMixed: boolean;
}

const SCAN_IDLE_COUNTS = new Float64Array(0);

const SCAN: FeatureScan = {
  text: "",
  length: 0,
  counts: SCAN_IDLE_COUNTS,
  unit: UNIT_LOWER,
  previous: STATE_NONE,
  wordLength: 0,
  digitLength: 0,
  punctuationLength: 0,
  alphanumericLength: 0,
  alphanumericMixed: false,
};

/** The feature each single wide character counts toward, by class; the other classes have their collectors. */
const WIDE_FEATURES = new Uint8Array(UNIT_RARE_SCRIPT + 1);
WIDE_FEATURES[UNIT_HIGH_SURROGATE] = ASTRAL;
WIDE_FEATURES[UNIT_CJK_PUNCTUATION] = CJK_PUNCTUATION;
WIDE_FEATURES[UNIT_KANA] = KANA;
WIDE_FEATURES[UNIT_SYMBOL] = SYMBOLS;
WIDE_FEATURES[UNIT_OTHER_NON_ASCII] = OTHER_NON_ASCII;
WIDE_FEATURES[UNIT_RARE_SCRIPT] = RARE_SCRIPT;

/** Moves past `width` code units and reads the class of the character there. */
function advance(scan: FeatureScan, index: number, width: number): number {
  const next = index + width;
  if (next < scan.length) scan.unit = CODE_UNIT_CLASSES[scan.text.charCodeAt(next)]!;
  return next;
}

/** The end of the run of `unitClass` that starts at `index`; `scan.unit` is left the class of the character there. */
function runEnd(scan: FeatureScan, index: number, unitClass: number): number {
  const { text, length } = scan;
  let end = index + 1;
  while (end < length) {
    const unit = CODE_UNIT_CLASSES[text.charCodeAt(end)]!;
    scan.unit = unit;
    if (unit !== unitClass) break;
    end++;
  }
  return end;
}

/**
 * Adds a letter or a digit to the current letter-and-digit run (starting a new run after anything else) and
 * tells whether the character is inside a long mixed run, where it counts as opaque data.
 */
function extendAlphanumeric(scan: FeatureScan, isDigit: boolean): boolean {
  const previous = scan.previous;
  if (previous <= STATE_DIGIT) {
    if ((previous === STATE_DIGIT) !== isDigit) scan.alphanumericMixed = true;
  } else {
    scan.alphanumericLength = 0;
    scan.alphanumericMixed = false;
  }
  scan.alphanumericLength++;
  // Inside a long hash-like run: the letter/digit/case structure no longer predicts tokens.
  return scan.alphanumericMixed && scan.alphanumericLength > OPAQUE_START;
}

/**
 * Adds the `rest` of a lower-case or digit run (after its first character) to the letter-and-digit run and
 * returns how many of them still count as letters or digits: in a mixed run, those past `OPAQUE_START` are opaque.
 */
function plainRest(scan: FeatureScan, rest: number): number {
  let plain = rest;
  if (scan.alphanumericMixed) {
    plain = OPAQUE_START - scan.alphanumericLength;
    if (plain < 0) plain = 0;
    else if (plain > rest) plain = rest;
    scan.counts[OPAQUE_CHARACTERS]! += rest - plain;
  }
  scan.alphanumericLength += rest;
  return plain;
}

/** A letter that follows no letter starts a word (attached to a single punctuation mark before it, if any). */
function startWord(scan: FeatureScan): void {
  const { counts, previous } = scan;
  if (previous === STATE_PUNCTUATION && scan.punctuationLength === 1) counts[ATTACHED_WORDS]!++;
  else counts[WORDS]!++;
  if (previous === STATE_DIGIT) counts[ALPHANUMERIC_SWITCHES]!++;
  scan.wordLength = 0;
}

/** A run of lower-case letters: the first may start a word, each continues it, until a mixed run turns opaque. */
function collectLowerRun(scan: FeatureScan, index: number): number {
  const counts = scan.counts;
  if (extendAlphanumeric(scan, false)) {
    counts[OPAQUE_CHARACTERS]!++;
  } else {
    counts[LETTERS]!++;
    if (scan.previous > STATE_LATIN_LETTER) startWord(scan);
    scan.wordLength++;
    if (scan.wordLength > LONG_WORD_START) counts[LONG_WORD_LETTERS]!++;
  }
  scan.previous = STATE_LOWER;
  const end = runEnd(scan, index, UNIT_LOWER);
  const rest = end - index - 1;
  if (rest > 0) {
    const plain = plainRest(scan, rest);
    counts[LETTERS]! += plain;
    scan.wordLength += plain;
    const beyond = scan.wordLength - LONG_WORD_START;
    if (beyond > 0) counts[LONG_WORD_LETTERS]! += Math.min(beyond, plain);
  }
  return end;
}

/**
 * A run of digits: the first may start a number, and a new group of three starts at every digit whose index in
 * the run is a multiple of three, until a mixed run turns opaque.
 */
function collectDigitRun(scan: FeatureScan, index: number): number {
  const counts = scan.counts;
  if (extendAlphanumeric(scan, true)) {
    counts[OPAQUE_CHARACTERS]!++;
  } else {
    counts[DIGITS]!++;
    const previous = scan.previous;
    if (previous !== STATE_DIGIT) {
      counts[DIGIT_RUNS]!++;
      if (previous <= STATE_LATIN_LETTER) counts[ALPHANUMERIC_SWITCHES]!++;
      else if (previous === STATE_SPACE) counts[DIGIT_RUNS_AFTER_SPACE]!++;
      scan.digitLength = 0;
    }
    if (scan.digitLength % 3 === 0) counts[DIGIT_GROUPS]!++;
    scan.digitLength++;
  }
  scan.previous = STATE_DIGIT;
  const end = runEnd(scan, index, UNIT_DIGIT);
  const rest = end - index - 1;
  if (rest > 0) {
    const plain = plainRest(scan, rest);
    const digitLength = scan.digitLength;
    counts[DIGITS]! += plain;
    // Multiples of three in [digitLength, digitLength + plain − 1].
    counts[DIGIT_GROUPS]! += (((digitLength + plain + 2) / 3) | 0) - (((digitLength + 2) / 3) | 0);
    scan.digitLength = digitLength + plain;
  }
  return end;
}

/** One capital letter: it starts a word, changes case within one, or continues a run of capitals. */
function collectUpper(scan: FeatureScan, index: number): number {
  const counts = scan.counts;
  if (extendAlphanumeric(scan, false)) {
    counts[OPAQUE_CHARACTERS]!++;
  } else {
    const previous = scan.previous;
    counts[LETTERS]!++;
    counts[UPPER_LETTERS]!++;
    if (previous === STATE_UPPER) counts[CAPITAL_RUN_LETTERS]!++;
    if (previous > STATE_LATIN_LETTER) startWord(scan);
    else if (previous !== STATE_UPPER) counts[CASE_CHANGES]!++;
    scan.wordLength++;
    if (scan.wordLength > LONG_WORD_START) counts[LONG_WORD_LETTERS]!++;
  }
  scan.previous = STATE_UPPER;
  return advance(scan, index, 1);
}

/** A run of spaces and tabs; two or more are an indent run. */
function collectSpaceRun(scan: FeatureScan, index: number): number {
  const end = runEnd(scan, index, UNIT_SPACE);
  const counts = scan.counts;
  counts[SPACES]! += end - index;
  counts[WHITESPACE_RUNS]!++;
  if (end - index >= 2) counts[INDENT_RUNS]!++;
  scan.previous = STATE_SPACE;
  return end;
}

/** A run of ASCII punctuation; its length decides whether a word after it is attached. */
function collectPunctuationRun(scan: FeatureScan, index: number): number {
  const end = runEnd(scan, index, UNIT_PUNCTUATION);
  scan.punctuationLength = end - index;
  scan.counts[PUNCTUATION]! += scan.punctuationLength;
  scan.counts[PUNCTUATION_RUNS]!++;
  scan.previous = STATE_PUNCTUATION;
  return end;
}

/** A run of line feeds and carriage returns: one run, each line feed a newline. */
function collectNewlineRun(scan: FeatureScan, index: number): number {
  const { text, length, counts } = scan;
  counts[NEWLINE_RUNS]!++;
  let end = index;
  for (; end < length; end++) {
    const unit = CODE_UNIT_CLASSES[text.charCodeAt(end)]!;
    scan.unit = unit;
    if (unit === UNIT_LINE_FEED) counts[NEWLINES]!++;
    else if (unit !== UNIT_CARRIAGE_RETURN) break;
  }
  scan.previous = STATE_NEWLINE;
  return end;
}

/** A run of CJK ideographs. */
function collectCjkRun(scan: FeatureScan, index: number): number {
  const end = runEnd(scan, index, UNIT_CJK);
  scan.counts[CJK]! += end - index;
  scan.previous = STATE_WIDE;
  return end;
}

/** An accented Latin letter: it continues a word, or starts one after anything but a letter. */
function collectLatinExtended(scan: FeatureScan, index: number): number {
  scan.counts[LATIN_EXTENDED]!++;
  if (scan.previous > STATE_LATIN_LETTER) {
    scan.counts[WORDS]!++;
    scan.wordLength = 0;
  }
  scan.previous = STATE_LATIN_LETTER;
  return advance(scan, index, 1);
}

/** One wide character counted on its own: kana, CJK punctuation, a symbol, another script, or an astral one. */
function collectWide(scan: FeatureScan, index: number, unit: number): number {
  scan.counts[WIDE_FEATURES[unit]!]!++;
  scan.previous = STATE_WIDE;
  // A surrogate pair is one astral code point: count it once and skip its second half.
  return advance(scan, index, unit === UNIT_HIGH_SURROGATE ? 2 : 1);
}

/**
 * Scans `text` once and adds its feature counts into `into` (length ≥ `TEXT_FEATURE_COUNT`), which the caller
 * zeroes. Allocates nothing; linear in the text length.
 *
 * Written for speed (it is the estimator's whole cost): one table read per character, and one branch chain on
 * the class (most frequent classes first) per run of characters, which hands the run to its collector. Runs of
 * spaces, punctuation, line breaks and CJK are consumed whole by their collector, and so is the rest of a
 * lower-case or digit run once its first character is counted: the chain never sees a character of the same
 * space, punctuation or line-break run as the previous one. Each code unit is read once: the collector that
 * ends a run leaves the class of the character after it in the scan's `unit`. `text-features.test.ts` checks
 * that it counts exactly like a plain reference scanner, on generated strings and on the corpus texts.
 */
export function collectTextFeatures(text: string, into: Float64Array): void {
  const scan = SCAN;
  const length = text.length;
  scan.text = text;
  scan.length = length;
  scan.counts = into;
  scan.unit = length === 0 ? UNIT_LOWER : CODE_UNIT_CLASSES[text.charCodeAt(0)]!;
  scan.previous = STATE_NONE;
  scan.wordLength = 0;
  scan.digitLength = 0;
  scan.punctuationLength = 0;
  scan.alphanumericLength = 0;
  scan.alphanumericMixed = false;
  let index = 0;
  while (index < length) {
    const unit = scan.unit;
    if (unit === UNIT_LOWER) index = collectLowerRun(scan, index);
    else if (unit === UNIT_SPACE) index = collectSpaceRun(scan, index);
    else if (unit === UNIT_PUNCTUATION) index = collectPunctuationRun(scan, index);
    else if (unit === UNIT_DIGIT) index = collectDigitRun(scan, index);
    else if (unit === UNIT_UPPER) index = collectUpper(scan, index);
    else if (unit === UNIT_LINE_FEED || unit === UNIT_CARRIAGE_RETURN) index = collectNewlineRun(scan, index);
    else if (unit === UNIT_CJK) index = collectCjkRun(scan, index);
    else if (unit === UNIT_LATIN_EXTENDED) index = collectLatinExtended(scan, index);
    else index = collectWide(scan, index, unit);
  }
  // Let go of the text and the caller's array until the next scan.
  scan.text = "";
  scan.counts = SCAN_IDLE_COUNTS;
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
