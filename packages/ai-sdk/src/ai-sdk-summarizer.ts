import { createRequestSummarizer, type Summarizer } from "@unforget/compact";
import {
  createUsage,
  type Message,
  PromptTooLongError,
  ProviderRequestError,
  type StopReason,
} from "@unforget/core";
import { parsePromptTooLongMessage } from "@unforget/provider-runtime";
import { generateText, jsonSchema, type LanguageModel, type ToolSet } from "ai";
import { fromModelMessages, toModelMessages } from "./convert-model-messages.ts";
import { isRecord } from "./is-record.ts";
import { usageFromAiSdk } from "./usage.ts";

export interface AiSdkSummarizerOptions {
  /** Any AI SDK language model (`anthropic("…")`, `bedrock("…")`, `vertex("…")`, a gateway id, …). */
  model: LanguageModel;
  /** Output limit of the plain fallback call; default 20,000 (as the model summariser's). */
  fallbackMaxTokens?: number;
  /**
   * The most output tokens the model gives (`limits.maxOutputTokens`): no summary asks for more. Default the
   * model id's known limit, else none.
   */
  maxOutputTokens?: number;
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  "tool-calls": "tool_use",
  "content-filter": "refusal",
};

/**
 * A summariser that has any AI SDK model write the compaction summaries — Unforget's model summariser (the
 * nine sections in any layout, a reminder when too few are there, the fork that shares the loop's prompt cache,
 * the input in pieces when it is too long) with the AI SDK's `generateText` as the transport. Errors come back
 * typed: a prompt-too-long reply as `PromptTooLongError`, anything else as `ProviderRequestError`.
 */
export function createAiSdkSummarizer(options: AiSdkSummarizerOptions): Summarizer {
  const id = modelName(options.model);
  const model = options.model;
  const providerId = `ai-sdk:${isRecord(model) && typeof model.provider === "string" ? model.provider : id}`;
  return createRequestSummarizer({
    model: id,
    providerId,
    ...(options.fallbackMaxTokens !== undefined ? { fallbackMaxTokens: options.fallbackMaxTokens } : {}),
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
    async send(request, requestOptions, system) {
      // The fork's tools are offered so that the request keeps the loop's cache prefix; none has an `execute`.
      const tools: ToolSet | undefined = request.tools
        ? Object.fromEntries(
            request.tools.map((definition) => [
              definition.name,
              {
                ...(definition.description ? { description: definition.description } : {}),
                inputSchema: jsonSchema(definition.inputSchema),
              },
            ]),
          )
        : undefined;
      try {
        const result = await generateText({
          model,
          ...(system ? { system } : {}),
          messages: toModelMessages(request.messages as Message[]),
          maxOutputTokens: request.maxTokens,
          ...(tools ? { tools } : {}),
          ...(requestOptions.signal ? { abortSignal: requestOptions.signal } : {}),
          ...(requestOptions.maxRetries !== undefined ? { maxRetries: requestOptions.maxRetries } : {}),
        });
        const content = fromModelMessages(result.response.messages)
          .filter((message) => message.role === "assistant")
          .flatMap((message) => message.content);
        return {
          id: result.response.id,
          model: result.response.modelId,
          role: "assistant",
          content,
          stopReason: STOP_REASONS[String(result.finishReason)] ?? "other",
          rawStopReason: String(result.finishReason),
          usage: usageFromAiSdk(result.usage) ?? createUsage(),
        };
      } catch (error) {
        throw typedError(error, providerId);
      }
    },
  });
}

function modelName(model: LanguageModel): string {
  if (typeof model === "string") return model;
  return isRecord(model) && typeof model.modelId === "string" ? model.modelId : "ai-sdk";
}

/** An AI SDK error as Unforget's: prompt-too-long when the provider's words say so, else a request error. */
export function typedError(error: unknown, providerId: string): Error {
  const cause = isRecord(error) && error.lastError !== undefined ? error.lastError : error;
  const record = isRecord(cause) ? cause : {};
  const message = cause instanceof Error ? cause.message : String(cause);
  const text = `${message} ${typeof record.responseBody === "string" ? record.responseBody : ""}`;
  const tooLong = parsePromptTooLongMessage(text);
  if (tooLong) {
    return new PromptTooLongError(`The model refused the prompt as too long: ${message}`, {
      providerId,
      ...tooLong,
      source: "error-response",
      cause: error,
    });
  }
  return new ProviderRequestError(`The AI SDK call failed: ${message}`, {
    providerId,
    status: typeof record.statusCode === "number" ? record.statusCode : undefined,
    retryable: record.isRetryable === true,
    cause: error,
  });
}
