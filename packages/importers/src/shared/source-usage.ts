import type { StopReason, Usage } from "@unforget/core";
import { createUsage } from "@unforget/core";
import { isRecord } from "./is-record.ts";

const number = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;

/**
 * Reads usage in Anthropic naming (`input_tokens`, `cache_creation_input_tokens`, …) or OpenAI/LiteLLM naming
 * (`prompt_tokens` including cached tokens, `completion_tokens`). Returns undefined when nothing is reported.
 */
export function usageFromSource(raw: unknown): Usage | undefined {
  if (!isRecord(raw)) return undefined;
  const cacheCreation = number(raw.cache_creation_input_tokens) ?? 0;
  const cacheRead =
    number(raw.cache_read_input_tokens) ??
    (isRecord(raw.prompt_tokens_details) ? number(raw.prompt_tokens_details.cached_tokens) : undefined) ??
    0;
  const input = number(raw.input_tokens);
  if (input !== undefined) {
    return createUsage({
      inputTokens: input,
      outputTokens: number(raw.output_tokens) ?? 0,
      cacheCreationInputTokens: cacheCreation,
      cacheReadInputTokens: cacheRead,
    });
  }
  const prompt = number(raw.prompt_tokens);
  if (prompt === undefined) return undefined;
  // OpenAI-style prompt_tokens include the cached tokens; keep the four fields disjoint.
  return createUsage({
    inputTokens: Math.max(0, prompt - cacheRead - cacheCreation),
    outputTokens: number(raw.completion_tokens) ?? 0,
    cacheCreationInputTokens: cacheCreation,
    cacheReadInputTokens: cacheRead,
  });
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  stop: "end_turn",
  max_tokens: "max_tokens",
  length: "max_tokens",
  stop_sequence: "stop_sequence",
  tool_use: "tool_use",
  tool_calls: "tool_use",
  function_call: "tool_use",
  pause_turn: "pause_turn",
  refusal: "refusal",
  content_filter: "refusal",
  model_context_window_exceeded: "model_context_window_exceeded",
};

/** Normalises an Anthropic `stop_reason` or OpenAI `finish_reason`; undefined when absent. */
export function stopReasonFromSource(raw: unknown): StopReason | undefined {
  if (typeof raw !== "string" || raw.length === 0) return undefined;
  return STOP_REASONS[raw] ?? "other";
}
