import { createModelSummarizer, type Summarizer } from "@unforget/compact";
import type { ModelProvider } from "@unforget/core";
import type { AgentSessionOptions } from "../loop/agent-session-options.ts";

/**
 * The context manager's summariser when the session has a summariser model of its own (`summarizer`), unless the
 * caller gave `context.summarizer`: Unforget's model summariser on that model and provider.
 */
export function summarizerOf(options: AgentSessionOptions): { summarizer?: Summarizer } {
  const chosen = options.summarizer;
  if (chosen === undefined || options.context?.summarizer !== undefined) return {};
  return {
    summarizer: createModelSummarizer({ provider: chosen.provider ?? options.provider, model: chosen.model }),
  };
}

/**
 * The model and provider that keep the session notes and extract memories: `memory.model` on the session's
 * provider when given, else the summariser model, else the session's model.
 */
export function backgroundModel(
  options: AgentSessionOptions,
  sessionModel: string,
): { provider: ModelProvider; model: string } {
  const memoryModel = options.memory?.model;
  if (memoryModel !== undefined) return { provider: options.provider, model: memoryModel };
  const chosen = options.summarizer;
  if (chosen !== undefined) return { provider: chosen.provider ?? options.provider, model: chosen.model };
  return { provider: options.provider, model: sessionModel };
}
