import {
  getModelLimits,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  type RequestOptions,
} from "@unforget/core";
import { createModelSummarizer } from "./model-summarizer.ts";
import type { Summarizer } from "./summarizer.ts";

export interface RequestSummarizerOptions {
  /** The model's id: it names the window that bounds a summary's input. */
  model: string;
  /** Shown in errors and reports ("ai-sdk:anthropic", "langchain:claude-…"). */
  providerId: string;
  /**
   * Called for each summary request, with its system prompt as one text; resolves to the whole response. Rejects
   * with `PromptTooLongError` when the model refused the input as too long (the compaction then splits it into
   * smaller pieces and retries), else with a typed `UnforgetError` (`ProviderRequestError` when it may be retried).
   */
  send(request: ModelRequest, options: RequestOptions, system: string | undefined): Promise<ModelResponse>;
  /** Output limit of the plain fallback call; default 20,000. */
  fallbackMaxTokens?: number;
  /**
   * The most output tokens the model gives: no summary request asks for more (a model capped at 8,192 refuses
   * a request for 20,000). Default the model's known limit (core's table), else none.
   */
  maxOutputTokens?: number;
}

/**
 * The model summariser (`createModelSummarizer`: the nine sections in any layout, the reminder, the fork that
 * shares the loop's prompt cache) over one request function, for a model that is not a `ModelProvider` — an AI SDK
 * model, a LangChain chat model. Nothing is streamed: each request resolves whole.
 */
export function createRequestSummarizer(options: RequestSummarizerOptions): Summarizer {
  // Read on the first request (an unknown id's look-up warns once; a summariser that is never used stays quiet).
  let cap: { maxOutputTokens: number | undefined } | undefined;
  const limitOf = () => {
    if (cap === undefined) {
      const table = options.maxOutputTokens === undefined ? getModelLimits(options.model) : undefined;
      cap = {
        maxOutputTokens: options.maxOutputTokens ?? (table?.known ? table.maxOutputTokens : undefined),
      };
    }
    return cap.maxOutputTokens;
  };
  const send = (given: ModelRequest, requestOptions: RequestOptions) => {
    const maxOutputTokens = limitOf();
    const request =
      maxOutputTokens !== undefined && given.maxTokens > maxOutputTokens
        ? { ...given, maxTokens: maxOutputTokens }
        : given;
    return options.send(
      request,
      requestOptions,
      typeof request.system === "string"
        ? request.system
        : request.system?.map((block) => block.text).join("\n"),
    );
  };
  const provider: ModelProvider = {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: options.providerId,
    capabilities: {
      nativeTokenCounting: false,
      nativeContextManagement: false,
      promptCaching: false,
      thinking: false,
    },
    createMessage: (request, requestOptions = {}) => send(request, requestOptions),
    streamMessage(request, requestOptions = {}) {
      let response: Promise<ModelResponse> | undefined;
      const finalResponse = () => {
        response ??= send(request, requestOptions);
        return response;
      };
      return {
        finalResponse,
        async *[Symbol.asyncIterator](): AsyncGenerator<ModelStreamEvent> {
          const done = await finalResponse();
          yield { type: "message_start", id: done.id, model: done.model, usage: done.usage };
          for (const [index, block] of done.content.entries()) {
            yield { type: "block_start", index, block };
            yield { type: "block_stop", index };
          }
          yield { type: "message_delta", stopReason: done.stopReason };
          yield { type: "message_stop" };
        },
      };
    },
    async countTokens() {
      return {
        inputTokens: 0,
        method: "heuristic",
        fallbackReason: `${options.providerId} has no token counting`,
      };
    },
    getModelLimits: () => {
      const maxOutputTokens = limitOf();
      const table = getModelLimits(options.model);
      return maxOutputTokens === undefined ? table : { ...table, maxOutputTokens };
    },
  };
  return createModelSummarizer({
    provider,
    model: options.model,
    ...(options.fallbackMaxTokens !== undefined ? { fallbackMaxTokens: options.fallbackMaxTokens } : {}),
  });
}
