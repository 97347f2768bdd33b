import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { createRequestSummarizer, type Summarizer } from "@unforget/compact";
import { createUsage, type Message, PromptTooLongError, ProviderRequestError } from "@unforget/core";
import { parsePromptTooLongMessage } from "@unforget/provider-runtime";
import { fromLangChainMessages } from "./decode-langchain-message.ts";
import { toLangChainMessages } from "./encode-langchain-message.ts";
import { isRecord } from "./is-record.ts";

/** The chat model a summary is asked of: anything with LangChain's `invoke`. */
export type SummaryChatModel = Pick<BaseChatModel, "invoke">;

export interface LangChainSummarizerOptions {
  /** Any LangChain chat model (`ChatAnthropic`, `ChatBedrockConverse`, `ChatVertexAI`, …). */
  model: SummaryChatModel;
  /** Output limit of the plain fallback call; default 20,000 (as the model summariser's). */
  fallbackMaxTokens?: number;
}

/** A chat model's id, as LangChain's integrations name it (`model`, or the older `modelName`). */
export function chatModelId(model: unknown): string | undefined {
  if (typeof model === "string") return model;
  if (!isRecord(model)) return undefined;
  if (typeof model.model === "string") return model.model;
  return typeof model.modelName === "string" ? model.modelName : undefined;
}

/**
 * A summariser that has a LangChain chat model write the compaction summaries: Unforget's model summariser (the
 * nine sections in any layout, a reminder when too few are there, the input in pieces when it is too long) with the model's
 * `invoke` as the transport. A too-long refusal becomes `PromptTooLongError`, anything else `ProviderRequestError`.
 */
export function createLangChainSummarizer(options: LangChainSummarizerOptions): Summarizer {
  const id = chatModelId(options.model) ?? "langchain";
  const providerId = `langchain:${id}`;
  return createRequestSummarizer({
    model: id,
    providerId,
    ...(options.fallbackMaxTokens !== undefined ? { fallbackMaxTokens: options.fallbackMaxTokens } : {}),
    async send(request, requestOptions, system) {
      const messages: BaseMessage[] = toLangChainMessages(request.messages as Message[]);
      if (system) messages.unshift(new SystemMessage(system));
      try {
        const reply = await options.model.invoke(
          messages,
          requestOptions.signal ? { signal: requestOptions.signal } : {},
        );
        const [message] = fromLangChainMessages([reply]);
        return {
          id: typeof reply.id === "string" ? reply.id : "langchain",
          model: message?.model ?? id,
          role: "assistant",
          content: message?.content ?? [],
          stopReason: message?.content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
          usage: message?.usage ?? createUsage(),
        };
      } catch (error) {
        throw typedError(error, providerId);
      }
    },
  });
}

/** A chat model's error as Unforget's: prompt-too-long when the provider's words say so, else a request error. */
export function typedError(error: unknown, providerId: string): Error {
  const message = error instanceof Error ? error.message : String(error);
  const record = isRecord(error) ? error : {};
  const tooLong = parsePromptTooLongMessage(message);
  if (tooLong) {
    return new PromptTooLongError(`The model refused the prompt as too long: ${message}`, {
      providerId,
      ...tooLong,
      source: "error-response",
      cause: error,
    });
  }
  const status = typeof record.status === "number" ? record.status : undefined;
  return new ProviderRequestError(`The chat model call failed: ${message}`, {
    providerId,
    status,
    retryable: status === 429 || (status !== undefined && status >= 500),
    cause: error,
  });
}
