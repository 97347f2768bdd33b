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
}

/**
 * The model summariser (`createModelSummarizer`: the nine sections in any layout, the reminder, the fork that
 * shares the loop's prompt cache) over one request function, for a model that is not a `ModelProvider` — an AI SDK
 * model, a LangChain chat model. Nothing is streamed: each request resolves whole.
 */
export function createRequestSummarizer(options: RequestSummarizerOptions): Summarizer {
  const send = (request: ModelRequest, requestOptions: RequestOptions) =>
    options.send(
      request,
      requestOptions,
      typeof request.system === "string"
        ? request.system
        : request.system?.map((block) => block.text).join("\n"),
    );
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
    getModelLimits: () => getModelLimits(options.model),
  };
  return createModelSummarizer({
    provider,
    model: options.model,
    ...(options.fallbackMaxTokens !== undefined ? { fallbackMaxTokens: options.fallbackMaxTokens } : {}),
  });
}
