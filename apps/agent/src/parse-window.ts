import { OptionValueError } from "./replay/replay-errors.ts";

/** The smallest window the thresholds support (the tokens package refuses smaller ones). */
export const MIN_WINDOW = 8_000;
/** The largest window accepted: no model offers more. */
export const MAX_WINDOW = 10_000_000;

const UNITS: Readonly<Record<string, number>> = { "": 1, k: 1_000, m: 1_000_000 };

/**
 * Reads a window in tokens: `16000`, `16_000`, `16K`, `1.5M` (K = 1,000 and M = 1,000,000, as model windows
 * are quoted). Throws `OptionValueError` naming the accepted forms for anything else.
 */
export function parseWindow(value: string): number {
  const match = /^\s*(\d+(?:[_,]\d{3})*(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(value);
  const number = match ? Number(match[1]!.replace(/[_,]/g, "")) : Number.NaN;
  const tokens = Math.round(number * (UNITS[(match?.[2] ?? "").toLowerCase()] ?? Number.NaN));
  if (!Number.isFinite(tokens)) {
    throw new OptionValueError(
      "--window",
      `--window ${JSON.stringify(value)} is not a number of tokens. Write it as 16000, 16K or 1M.`,
    );
  }
  if (tokens < MIN_WINDOW || tokens > MAX_WINDOW) {
    throw new OptionValueError(
      "--window",
      `--window ${value} is ${tokens.toLocaleString("en-US")} tokens; use a window from ${MIN_WINDOW.toLocaleString("en-US")} (8K) to ${MAX_WINDOW.toLocaleString("en-US")} (10M) tokens.`,
    );
  }
  return tokens;
}

/** A token count as people write windows: 16K, 200K, 1M, 1.5M; exact below 1,000. */
export function formatWindow(tokens: number): string {
  if (tokens >= 1_000_000 && tokens % 100_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens >= 1_000 && tokens % 1_000 === 0) return `${tokens / 1_000}K`;
  return tokens.toLocaleString("en-US");
}
