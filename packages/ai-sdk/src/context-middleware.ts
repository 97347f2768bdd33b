import {
  type ContextStatus,
  createContextManager,
  createHostConversation,
  type HostConversationListener,
  type PrepareResult,
} from "@unforget/compact";
import { type Message, PromptTooLongError, type ToolDefinition, type Usage } from "@unforget/core";
import type { LanguageModelMiddleware, ModelMessage } from "ai";
import {
  type AiSdkContextOptions,
  managerOptions,
  modelIdOf,
  settledBreakpointOption,
} from "./ai-sdk-context.ts";
import { typedError } from "./ai-sdk-summarizer.ts";
import { isRecord } from "./is-record.ts";
import { createModelMessageCodec } from "./model-message-codec.ts";
import { usageFromAiSdk } from "./usage.ts";

type TransformParams = NonNullable<LanguageModelMiddleware["transformParams"]>;
type CallParams = Parameters<TransformParams>[0]["params"];

/** A `LanguageModelMiddleware` with Unforget's context management, and a window on what it did. */
export interface ContextMiddleware extends LanguageModelMiddleware {
  /** The last call's preparation: what each layer did, the count, the status. */
  readonly lastResult: PrepareResult | undefined;
  /** The whole conversation as the manager received it (assistant messages carry the usage reported for them). */
  readonly messages: readonly Message[];
  /** The context status now (cheap). */
  status(): ContextStatus;
  /** Subscribes to every event; returns the unsubscribe function. */
  on(listener: HostConversationListener): () => void;
}

/** The function tools of a call, for counting. */
function callTools(tools: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return tools.flatMap((tool) =>
    isRecord(tool) && typeof tool.name === "string"
      ? [
          {
            name: tool.name,
            ...(typeof tool.description === "string" ? { description: tool.description } : {}),
            inputSchema: isRecord(tool.inputSchema) ? tool.inputSchema : {},
          },
        ]
      : [],
  );
}

/**
 * Unforget's context management as a `LanguageModelMiddleware`, for code that does not own the loop:
 * `wrapLanguageModel({ model, middleware: createContextMiddleware({ model }) })`. Every call's prompt goes
 * through the ladder (its leading system messages stay first and are counted); the usage each response
 * reports anchors the next call's count; and when the provider refuses a prompt as too long, the middleware
 * compacts reactively and retries once.
 */
export function createContextMiddleware(options: Omit<AiSdkContextOptions, "history">): ContextMiddleware {
  const conversation = createHostConversation<ModelMessage>({
    codec: createModelMessageCodec(),
    createManager: () => createContextManager(managerOptions(options)),
    idPrefix: "aisdk",
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...settledBreakpointOption(options),
  });
  const providerId = `ai-sdk:${modelIdOf(options.model)}`;
  let pendingUsage: Usage | undefined;
  let lastResult: PrepareResult | undefined;

  const observe = (usage: unknown) => {
    pendingUsage = usageFromAiSdk(usage) ?? pendingUsage;
  };

  /** Runs `call` with the prepared prompt; after a prompt-too-long refusal, compacts and runs it once more. */
  async function withRecovery<T>(
    params: CallParams,
    call: (params: CallParams) => PromiseLike<T>,
  ): Promise<T> {
    try {
      return await call(params);
    } catch (error) {
      const typed = typedError(error, providerId);
      if (!(typed instanceof PromptTooLongError)) throw error;
      const recovered = await conversation.recover(typed, prepareOptions(params));
      lastResult = recovered.result;
      return call({ ...params, prompt: recovered.messages as CallParams["prompt"] });
    }
  }

  function prepareOptions(params: CallParams) {
    const tools = callTools(params.tools);
    return {
      ...(tools && tools.length > 0 ? { tools } : {}),
      ...(params.maxOutputTokens !== undefined ? { maxTokens: params.maxOutputTokens } : {}),
      ...(params.abortSignal ? { signal: params.abortSignal } : {}),
    };
  }

  const middleware = {
    specificationVersion: "v4",
    async transformParams({ params }) {
      const added = conversation.append(params.prompt as ModelMessage[]);
      const assistant = added.find((message) => message.role === "assistant");
      if (assistant && pendingUsage) assistant.usage = pendingUsage;
      pendingUsage = undefined;
      const prepared = await conversation.prepare(prepareOptions(params));
      lastResult = prepared.result;
      return prepared.changed ? { ...params, prompt: prepared.messages as CallParams["prompt"] } : params;
    },
    async wrapGenerate({ doGenerate, params, model }) {
      const result = await withRecovery(params, (current) =>
        current === params ? doGenerate() : model.doGenerate(current),
      );
      observe(result.usage);
      return result;
    },
    async wrapStream({ doStream, params, model }) {
      const result = await withRecovery(params, (current) =>
        current === params ? doStream() : model.doStream(current),
      );
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (isRecord(part) && part.type === "finish") observe(part.usage);
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
    get lastResult() {
      return lastResult;
    },
    get messages() {
      return conversation.messages;
    },
    status: () => conversation.status(),
    on: (listener: HostConversationListener) => conversation.on(listener),
  } satisfies Omit<ContextMiddleware, "specificationVersion"> & { specificationVersion: string };
  // The AI SDK reads the hooks, not the version tag; the same object serves the AI SDK 6 and 7.
  return middleware as ContextMiddleware;
}
