/**
 * Cuts the middle out of a long text, keeping its head (headers, definitions) and its tail (results, errors),
 * cut at line boundaries when one is near, and marks what was removed. Returns the text unchanged when it fits.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const budget = Math.max(0, maxChars - 120);
  const half = Math.floor(budget / 2);
  let headEnd = half;
  const headBreak = text.lastIndexOf("\n", half);
  if (headBreak > half * 0.8) headEnd = headBreak;
  let tailStart = text.length - half;
  const tailBreak = text.indexOf("\n", tailStart);
  if (tailBreak !== -1 && tailBreak < tailStart + half * 0.2) tailStart = tailBreak + 1;
  const removed = text.slice(headEnd, tailStart);
  const lines = removed.split("\n").length - 1;
  const marker = `\n[… ${removed.length.toLocaleString("en-US")} characters${lines > 0 ? ` (${lines.toLocaleString("en-US")} lines)` : ""} cut from the middle …]\n`;
  return `${text.slice(0, headEnd)}${marker}${text.slice(tailStart)}`;
}
