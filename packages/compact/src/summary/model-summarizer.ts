import {
  createMessage,
  isUnforgetError,
  type Message,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  PromptTooLongError,
  ProviderRequestError,
} from "@unforget/core";
import { toRequestMessages } from "@unforget/transcript";
import { CompactionFailedError } from "../compact-error.ts";
import { estimateTextTokens } from "../conversation/conversation.ts";
import {
  KEEP_ALIVE_INTERVAL_MS,
  SUMMARY_MAX_TOKENS,
  SUMMARY_MIN_SECTIONS,
  SUMMARY_MIN_TOKENS,
  SUMMARY_STREAM_RETRIES,
} from "../defaults.ts";
import { buildCompactPrompt, missingSectionsReminder } from "./compact-prompt.ts";
import { extractSummarySections } from "./extractive-summarizer.ts";
import type { SummarizeRequest, Summarizer, SummaryResult } from "./summarizer.ts";
import {
  fillMissingSections,
  formatSummaryReply,
  hasEnoughSections,
  missingSections,
} from "./summary-format.ts";

export interface ModelSummarizerOptions {
  provider: ModelProvider;
  /** The model that writes summaries (the session's own model shares its prompt cache). */
  model: string;
  /** Output limit of the fallback call; default 20,000. */
  fallbackMaxTokens?: number;
  /** System prompt of the fallback call (the forked call reuses the session's). */
  fallbackSystem?: string;
}

interface Attempt {
  response: ModelResponse;
  text: string;
}

/**
 * A summariser that asks a model. The first call is a fork of the live session: the same system prompt,
 * tools and output limit, the conversation, then the compaction instruction — so it reuses the session's
 * prompt cache; tools are refused (a reply that calls one counts as a failure). If that fails, a plain
 * streaming call without tools and with a 20,000-token cap. The `<analysis>` scratchpad is removed and the
 * sections are found by their titles in any layout: a reply with at least five of the nine is used, the ones it
 * lacks filled in by the offline extractor (marked as such); one with fewer gets one reminder, then the
 * compaction fails. A stream that breaks after it started is retried twice; `PromptTooLongError` is passed up
 * (the caller splits the input into pieces).
 */
export function createModelSummarizer(options: ModelSummarizerOptions): Summarizer {
  const { provider, model } = options;
  return {
    name: "model",
    boundedByModelWindow: true,
    async summarize(request: SummarizeRequest): Promise<SummaryResult> {
      const prompt = buildCompactPrompt({
        scope: request.scope,
        ...(request.instructions ? { instructions: request.instructions } : {}),
        ...(request.previousSummary ? { previousSummary: request.previousSummary } : {}),
        ...(request.userMessagesCarried ? { userMessagesCarried: true } : {}),
      });
      const conversation: Message[] = [
        ...request.messages,
        createMessage("user", prompt, { id: "compact_prompt", isMeta: true }),
      ];
      const usage = { inputTokens: 0, outputTokens: 0, calls: 0 };
      const keepAlive = request.onKeepAlive
        ? setInterval(request.onKeepAlive, KEEP_ALIVE_INTERVAL_MS)
        : undefined;
      keepAlive?.unref?.();
      try {
        const forked = request.cacheSafe;
        const first = (extra: Message[]) =>
          forked
            ? call(provider, forkRequest(model, forked, [...conversation, ...extra]), request, usage)
            : call(provider, plainRequest(model, options, [...conversation, ...extra]), request, usage);
        let attempt: Attempt;
        try {
          attempt = await first([]);
          if (
            attempt.response.content.some((block) => block.type === "tool_use") ||
            attempt.text.length === 0
          ) {
            throw new CompactionFailedError(
              "summary",
              "The summary call answered with a tool call instead of text.",
            );
          }
        } catch (error) {
          if (error instanceof PromptTooLongError || !forked) throw error;
          attempt = await call(provider, plainRequest(model, options, conversation), request, usage);
        }
        let summary = formatSummaryReply(attempt.text);
        let missing = missingSections(summary);
        if (!hasEnoughSections(summary, missing)) {
          const retry = [
            createMessage("assistant", attempt.text, { id: "compact_reply" }),
            createMessage("user", missingSectionsReminder(missing), { id: "compact_reminder", isMeta: true }),
          ];
          const again = await call(
            provider,
            plainRequest(model, options, [...conversation, ...retry]),
            request,
            usage,
          );
          summary = formatSummaryReply(again.text);
          missing = missingSections(summary);
          if (!hasEnoughSections(summary, missing)) {
            throw new CompactionFailedError(
              "summary",
              `The model's summary lacks ${missing.join(", ")} even after a reminder (at least ${SUMMARY_MIN_SECTIONS} of the nine sections are needed); the compaction was not applied and the conversation is unchanged.`,
            );
          }
        }
        // The sections the reply lacks come from the offline extractor, marked as such.
        if (missing.length > 0) {
          const room = Math.max(SUMMARY_MIN_TOKENS, request.maxTokens - estimateTextTokens(summary));
          summary = fillMissingSections(summary, extractSummarySections(request, room), missing);
        }
        return {
          text: summary,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          calls: usage.calls,
        };
      } finally {
        if (keepAlive) clearInterval(keepAlive);
      }
    },
  };
}

function forkRequest(
  model: string,
  cacheSafe: NonNullable<SummarizeRequest["cacheSafe"]>,
  messages: Message[],
): ModelRequest {
  const request: ModelRequest = {
    model,
    messages: toRequestMessages(messages),
    maxTokens: cacheSafe.maxTokens ?? SUMMARY_MAX_TOKENS,
  };
  if (cacheSafe.system !== undefined) request.system = cacheSafe.system;
  if (cacheSafe.tools !== undefined) request.tools = cacheSafe.tools;
  return request;
}

function plainRequest(model: string, options: ModelSummarizerOptions, messages: Message[]): ModelRequest {
  return {
    model,
    system:
      options.fallbackSystem ??
      "You write handoff summaries of software engineering conversations so that another model can continue the work.",
    messages: toRequestMessages(messages),
    maxTokens: options.fallbackMaxTokens ?? SUMMARY_MAX_TOKENS,
  };
}

async function call(
  provider: ModelProvider,
  modelRequest: ModelRequest,
  request: SummarizeRequest,
  usage: { inputTokens: number; outputTokens: number; calls: number },
): Promise<Attempt> {
  let lastError: unknown;
  for (let attempt = 0; attempt <= SUMMARY_STREAM_RETRIES; attempt++) {
    usage.calls++;
    try {
      const stream = request.signal
        ? provider.streamMessage(modelRequest, { signal: request.signal })
        : provider.streamMessage(modelRequest);
      const response = await stream.finalResponse();
      usage.inputTokens +=
        response.usage.inputTokens +
        response.usage.cacheCreationInputTokens +
        response.usage.cacheReadInputTokens;
      usage.outputTokens += response.usage.outputTokens;
      const text = response.content
        .filter((block) => block.type === "text")
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("");
      return { response, text };
    } catch (error) {
      if (error instanceof PromptTooLongError) throw error;
      lastError = error;
      const retryable = error instanceof ProviderRequestError && error.retryable;
      if (!retryable) break;
    }
  }
  if (lastError instanceof CompactionFailedError) throw lastError;
  throw new CompactionFailedError(
    "summary",
    `The summary call failed (${isUnforgetError(lastError) || lastError instanceof Error ? lastError.message : String(lastError)}); the conversation is unchanged.`,
    { cause: lastError },
  );
}
