// Placeholder surface so dependants can build while the estimator is written; the signature is stable.
import type { CountTokensRequest } from "@unforget/core";

/** Heuristic input-token estimate for a whole request (system, messages, tools). Never throws. */
export function estimateRequestTokens(request: CountTokensRequest): number {
  return Math.ceil(JSON.stringify([request.system ?? "", request.messages, request.tools ?? []]).length / 4);
}
