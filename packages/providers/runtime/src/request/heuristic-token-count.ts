import type { CountTokensRequest, TokenCount } from "@unforget/core";
import { estimateRequestTokens } from "@unforget/tokens";

/** The count every provider answers with when it cannot count natively, saying why. Never throws. */
export function heuristicTokenCount(request: CountTokensRequest, reason: string): TokenCount {
  return { inputTokens: estimateRequestTokens(request), method: "heuristic", fallbackReason: reason };
}
