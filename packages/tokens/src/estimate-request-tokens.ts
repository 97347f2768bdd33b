import type { CountTokensRequest } from "@unforget/core";
import { isRecord, messageTokensWith, textTokens } from "./estimate-message-tokens.ts";
import type { EstimatorProfile } from "./estimator-coefficients.ts";
import { toCount } from "./finite-count.ts";
import { stringifyForCounting } from "./stringify-for-counting.ts";
import { resolveTokenEstimatorOptions, type TokenEstimatorOptions } from "./token-estimator-options.ts";

/** Framing the provider adds around each tool definition. */
const TOOL_OVERHEAD_TOKENS = 8;

/** Each element of a list through `each`; a value that is not a list is counted as its JSON text. */
function sumOf(value: unknown, profile: EstimatorProfile, each: (item: unknown) => number): number {
  if (value === undefined) return 0;
  if (!Array.isArray(value)) return textTokens(value, profile);
  let total = 0;
  for (const item of value) total += each(item);
  return total;
}

/**
 * Pre-flight input-token estimate for a whole request: system prompt, every message (with per-message
 * overhead), and tool definitions (name, description, JSON schema), multiplied by the padding (4/3 by
 * default) so the estimate errs high. The heuristic fallback of every provider's `countTokens`. Parts of the
 * wrong type are counted as their JSON text. Never throws; always a whole number in [0, MAX_COUNTED_TOKENS].
 */
export function estimateRequestTokens(
  request: CountTokensRequest,
  options: TokenEstimatorOptions = {},
): number {
  const resolved = resolveTokenEstimatorOptions(options);
  const profile = resolved.profile;
  if (!isRecord(request)) return toCount(textTokens(request, profile) * resolved.padding);
  let total = 0;
  try {
    const system = request.system;
    total +=
      typeof system === "string"
        ? textTokens(system, profile)
        : sumOf(system, profile, (block) =>
            textTokens(isRecord(block) ? (block.text ?? "") : block, profile),
          );
    total += sumOf(request.messages, profile, (message) => messageTokensWith(message as never, resolved));
    total += sumOf(request.tools, profile, (tool) =>
      isRecord(tool)
        ? TOOL_OVERHEAD_TOKENS +
          textTokens(tool.name ?? "", profile) +
          textTokens(tool.description ?? "", profile) +
          textTokens(stringifyForCounting(tool.inputSchema), profile)
        : textTokens(tool, profile),
    );
  } catch {
    // A getter or proxy that throws while being read: fall back to the request's JSON size.
    total = stringifyForCounting(request).length / 3;
  }
  return toCount(total * resolved.padding);
}
