import type { Usage } from "@unforget/core";
import { isRecord } from "./is-record.ts";

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;

/**
 * The AI SDK's usage as Unforget's, from either shape: a step's `LanguageModelUsage` (`inputTokens` a number,
 * cache reads and writes in `inputTokenDetails`) or a model call's (`inputTokens: { total, noCache, cacheRead,
 * cacheWrite }`). Undefined when the provider reported no input tokens: a count cannot anchor on it.
 */
export function usageFromAiSdk(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  let total: number | undefined;
  let noCache: number | undefined;
  let cacheRead: number | undefined;
  let cacheWrite: number | undefined;
  let output: number | undefined;
  if (isRecord(usage.inputTokens)) {
    total = count(usage.inputTokens.total);
    noCache = count(usage.inputTokens.noCache);
    cacheRead = count(usage.inputTokens.cacheRead);
    cacheWrite = count(usage.inputTokens.cacheWrite);
    output = isRecord(usage.outputTokens) ? count(usage.outputTokens.total) : undefined;
  } else {
    const details = isRecord(usage.inputTokenDetails) ? usage.inputTokenDetails : {};
    total = count(usage.inputTokens);
    noCache = count(details.noCacheTokens);
    cacheRead = count(details.cacheReadTokens) ?? count(usage.cachedInputTokens);
    cacheWrite = count(details.cacheWriteTokens);
    output = count(usage.outputTokens);
  }
  if (total === undefined && noCache === undefined) return undefined;
  const read = cacheRead ?? 0;
  const write = cacheWrite ?? 0;
  return {
    inputTokens: noCache ?? Math.max(0, (total ?? 0) - read - write),
    outputTokens: output ?? 0,
    cacheCreationInputTokens: write,
    cacheReadInputTokens: read,
  };
}
