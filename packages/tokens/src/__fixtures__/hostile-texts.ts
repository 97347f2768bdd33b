// Texts that could make a scanner slow (huge runs of one character or one short pattern), estimated in a
// hang-guarded worker (`@unforget/testing/guard`): the scan is synchronous, so only a worker lets a hang fail
// the test instead of holding it.
import { estimateTextTokens } from "../estimate-text-tokens.ts";
import type { EstimatorProfile } from "../estimator-coefficients.ts";

const PROFILES: EstimatorProfile[] = ["claude", "o200k", "cl100k"];

/** Each profile's estimate of `unit` repeated `short` times and `long` times. */
export function estimateRuns(
  unit: string,
  short: number,
  long: number,
): Array<{ profile: EstimatorProfile; short: number; long: number }> {
  return PROFILES.map((profile) => ({
    profile,
    short: estimateTextTokens(unit.repeat(short), profile),
    long: estimateTextTokens(unit.repeat(long), profile),
  }));
}

/** The estimate of one line and of that line repeated until the text is `length` characters or more. */
export function estimateRepeatedLine(
  line: string,
  length: number,
): { line: number; text: number; repeats: number } {
  const repeats = Math.ceil(length / line.length);
  return { line: estimateTextTokens(line), text: estimateTextTokens(line.repeat(repeats)), repeats };
}
