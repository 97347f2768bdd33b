import type { CountTokensRequest } from "@unforget/core";
import { messageTokensWith, stringifyForCounting } from "./estimate-message-tokens.ts";
import { estimateTextTokensExact } from "./estimate-text-tokens.ts";
import { resolveTokenEstimatorOptions, type TokenEstimatorOptions } from "./token-estimator-options.ts";

/** Framing the provider adds around each tool definition. */
const TOOL_OVERHEAD_TOKENS = 8;

/**
 * Pre-flight input-token estimate for a whole request: system prompt, every message (with per-message
 * overhead), and tool definitions (name, description, JSON schema), multiplied by the padding (4/3 by
 * default) so the estimate errs high. The heuristic fallback of every provider's `countTokens`. Never throws.
 */
export function estimateRequestTokens(
  request: CountTokensRequest,
  options: TokenEstimatorOptions = {},
): number {
  const resolved = resolveTokenEstimatorOptions(options);
  const profile = resolved.profile;
  let total = 0;
  try {
    if (typeof request.system === "string") total += estimateTextTokensExact(request.system, profile);
    else if (Array.isArray(request.system)) {
      for (const block of request.system) total += estimateTextTokensExact(block.text ?? "", profile);
    }
    for (const message of request.messages ?? []) total += messageTokensWith(message, resolved);
    for (const tool of request.tools ?? []) {
      total +=
        TOOL_OVERHEAD_TOKENS +
        estimateTextTokensExact(tool.name ?? "", profile) +
        estimateTextTokensExact(tool.description ?? "", profile) +
        estimateTextTokensExact(stringifyForCounting(tool.inputSchema), profile);
    }
  } catch {
    // A malformed request (wrong shapes from untyped callers): fall back to its JSON size.
    total = stringifyForCounting(request).length / 3;
  }
  return Math.ceil(total * resolved.padding);
}
