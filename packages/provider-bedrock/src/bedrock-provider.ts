import { randomUUID } from "node:crypto";
import type { BedrockRuntimeClientConfig, ConverseStreamOutput } from "@aws-sdk/client-bedrock-runtime";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
} from "@aws-sdk/client-bedrock-runtime";
import type {
  CountTokensRequest,
  LearnedModelLimits,
  ModelLimits,
  ModelLimitsEntry,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStream,
  ModelStreamEvent,
  ProviderCapabilities,
  RequestOptions,
  TokenCount,
} from "@unforget/core";
import {
  AbortedError,
  ConfigurationError,
  createLearnedModelLimits,
  createModelLimitsRegistry,
  createModelStream,
  DEFAULT_MAX_RETRIES,
  PROVIDER_SPECIFICATION_VERSION,
  PromptTooLongError,
  ProviderRequestError,
  withRetries,
} from "@unforget/core";
import { estimateRequestTokens } from "@unforget/tokens";
import { BEDROCK_PROVIDER_ID, toBedrockError } from "./bedrock-error.ts";
import { toConverseConversation, toConverseInput } from "./converse-request.ts";
import { fromConverseResponse } from "./converse-response.ts";
import { translateConverseStream } from "./converse-stream.ts";
import { countTokensModelId } from "./count-tokens-model-id.ts";

/** Static AWS credentials (an access key pair, with a session token for temporary credentials). */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When temporary credentials expire; a provider function is called again before then. */
  expiration?: Date;
}

export interface BedrockProviderSettings {
  /** AWS region of the Bedrock Runtime endpoint. Falls back to `AWS_REGION`, then `AWS_DEFAULT_REGION`. */
  region?: string;
  /**
   * Endpoint URL override (a VPC endpoint, a proxy, or a local fake). Without it the SDK uses the regional
   * endpoint, or `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` / `AWS_ENDPOINT_URL` when set.
   */
  endpoint?: string;
  /**
   * SigV4 credentials, or a function returning them (called by the SDK whenever it needs fresh ones). Without
   * them the SDK's default chain is used: environment, shared config/SSO profiles, container and instance roles.
   */
  credentials?: BedrockCredentials | (() => Promise<BedrockCredentials>);
  /**
   * Bedrock API key, sent as `Authorization: Bearer`. Falls back to `AWS_BEARER_TOKEN_BEDROCK`, which the SDK
   * also reads itself and which then wins over `credentials`.
   */
  apiKey?: string;
  /**
   * The Smithy HTTP handler the SDK should use (e.g. a `NodeHttpHandler` for an HTTP/1.1-only proxy). The
   * default is the SDK's HTTP/2 handler. Passed to the SDK unchanged.
   */
  requestHandler?: unknown;
  /** Retries after the first attempt for throttling, capacity, 5xx and network failures. Default 2. */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled per retry (a `retry-after` header replaces it). Default 500. */
  initialRetryDelayMs?: number;
  /** Per-attempt timeout in milliseconds when the call does not set one. Default: none. */
  timeoutMs?: number;
  /** Context-window and output-limit overrides, keyed by model id or canonical family id. */
  modelLimits?: Record<string, Partial<ModelLimitsEntry>>;
  /**
   * "native" (default) calls CountTokens and falls back to the heuristic where the model or region does not
   * support it; "heuristic" never calls the service.
   */
  countTokens?: "native" | "heuristic";
}

/** The Bedrock `ModelProvider`, with what it learned about CountTokens support. */
export interface BedrockProvider extends ModelProvider {
  /** Model ids (as sent to CountTokens) found not to support native counting, with the reason. */
  readonly countTokensUnsupported: ReadonlyMap<string, string>;
}

const CAPABILITIES: ProviderCapabilities = Object.freeze({
  nativeTokenCounting: true,
  cacheEdits: false,
  nativeContextManagement: false,
  promptCaching: true,
  thinking: true,
});

const COUNT_TOKENS_UNSUPPORTED =
  /(?:doesn't|does not|not) support(?:ed)?[^.]*count|count[^.]*not (?:supported|available)/i;

interface ResolvedSettings {
  client: BedrockRuntimeClient;
  maxRetries: number;
  initialRetryDelayMs: number;
  timeoutMs: number | undefined;
}

/**
 * Creates the Bedrock provider on `@aws-sdk/client-bedrock-runtime` (Converse, ConverseStream, CountTokens).
 * Settings and environment variables are read on the first request, not here. The SDK's own retries are
 * switched off; retries happen in `withRetries` so every provider behaves the same.
 */
export function createBedrockProvider(settings: BedrockProviderSettings = {}): BedrockProvider {
  let resolved: ResolvedSettings | undefined;
  let registry: LearnedModelLimits | undefined;
  // One registry per provider instance; an overflow error's stated maximum lowers the model's window in it.
  const limits = (): LearnedModelLimits =>
    (registry ??= createLearnedModelLimits(
      createModelLimitsRegistry(
        settings.modelLimits === undefined ? {} : { overrides: settings.modelLimits },
      ),
    ));
  const unsupported = new Map<string, string>();

  const resolve = (): ResolvedSettings => {
    if (resolved) return resolved;
    const region = settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (region === undefined || region.trim() === "") {
      throw new ConfigurationError(
        "No AWS region for Bedrock: pass `region` to createBedrockProvider or set AWS_REGION (e.g. us-east-1).",
        { setting: "region" },
      );
    }
    const config: Record<string, unknown> = { region, maxAttempts: 1 };
    if (settings.endpoint !== undefined) config.endpoint = settings.endpoint;
    if (settings.credentials !== undefined) config.credentials = settings.credentials;
    if (settings.apiKey !== undefined) {
      // Without an explicit key the SDK reads AWS_BEARER_TOKEN_BEDROCK itself.
      config.token = { token: settings.apiKey };
      config.authSchemePreference = ["httpBearerAuth"];
    }
    if (settings.requestHandler !== undefined) config.requestHandler = settings.requestHandler;
    resolved = {
      client: new BedrockRuntimeClient(config as BedrockRuntimeClientConfig),
      maxRetries: settings.maxRetries ?? DEFAULT_MAX_RETRIES,
      initialRetryDelayMs: settings.initialRetryDelayMs ?? 500,
      timeoutMs: settings.timeoutMs,
    };
    return resolved;
  };

  /**
   * Runs one SDK call per attempt with the caller's signal, a per-attempt timeout and retries. The timeout
   * bounds the attempt (for a stream: up to its first event), not how long the caller then reads a stream.
   */
  const send = async <T>(
    options: RequestOptions,
    call: (client: BedrockRuntimeClient, signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> => {
    const config = resolve();
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;
    return withRetries(
      async () => {
        const timeout = timeoutMs === undefined ? undefined : new AbortController();
        const timer =
          timeout === undefined
            ? undefined
            : setTimeout(
                () => timeout.abort(new AbortedError(`The Bedrock request timed out after ${timeoutMs} ms.`)),
                timeoutMs,
              );
        const signals = [options.signal, timeout?.signal].filter((signal) => signal !== undefined);
        const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
        try {
          return await call(config.client, signal);
        } catch (error) {
          throw toBedrockError(error, {
            signal: options.signal,
            timedOutAfterMs: timeout?.signal.aborted && !options.signal?.aborted ? timeoutMs : undefined,
          });
        } finally {
          // The attempt is over (for a stream: its first event arrived); the timer must not cut the rest.
          clearTimeout(timer);
        }
      },
      {
        maxRetries: options.maxRetries ?? config.maxRetries,
        initialDelayMs: config.initialRetryDelayMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      },
    );
  };

  const heuristicCount = (request: CountTokensRequest, reason: string): TokenCount => ({
    inputTokens: estimateRequestTokens(request),
    method: "heuristic",
    fallbackReason: reason,
  });

  const provider: BedrockProvider = {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: BEDROCK_PROVIDER_ID,
    capabilities: CAPABILITIES,
    countTokensUnsupported: unsupported,

    async createMessage(request: ModelRequest, options: RequestOptions = {}): Promise<ModelResponse> {
      const input = toConverseInput(request);
      const response = await send(options, async (client, signal) => {
        const command = new ConverseCommand({ modelId: request.model, ...input });
        addHeaders(command, options.headers);
        const output = await client.send(command, signal === undefined ? {} : { abortSignal: signal });
        return fromConverseResponse(
          output,
          output.$metadata.requestId ?? `bedrock-${randomUUID()}`,
          request.model,
        );
      }).catch((error: unknown) => {
        limits().learnFromPromptTooLong(request.model, error);
        throw error;
      });
      if (response.stopReason === "model_context_window_exceeded") throw contextWindowExceeded(response);
      return response;
    },

    streamMessage(request: ModelRequest, options: RequestOptions = {}): ModelStream {
      return createModelStream(() => limits().learnFromStream(request.model, streamEvents(request, options)));
    },

    async countTokens(request: CountTokensRequest, options: RequestOptions = {}): Promise<TokenCount> {
      if (settings.countTokens === "heuristic")
        return heuristicCount(request, "countTokens is set to heuristic");
      if (request.messages.length === 0) {
        return heuristicCount(request, "CountTokens needs at least one message");
      }
      const modelId = countTokensModelId(request.model);
      const known = unsupported.get(modelId);
      if (known !== undefined) return heuristicCount(request, known);
      try {
        const output = await send(options, (client, signal) => {
          const command = new CountTokensCommand({
            modelId,
            input: { converse: toConverseConversation(request) },
          });
          addHeaders(command, options.headers);
          return client.send(command, signal === undefined ? {} : { abortSignal: signal });
        });
        return { inputTokens: output.inputTokens ?? 0, method: "native" };
      } catch (error) {
        if (error instanceof AbortedError || error instanceof ConfigurationError) throw error;
        const reason = `Bedrock CountTokens failed for ${modelId}: ${error instanceof Error ? error.message : String(error)}`;
        if (error instanceof ProviderRequestError && isCountTokensUnsupported(error))
          unsupported.set(modelId, reason);
        return heuristicCount(request, reason);
      }
    },

    getModelLimits(model: string): ModelLimits {
      return limits().get(model);
    },
  };

  async function* streamEvents(
    request: ModelRequest,
    options: RequestOptions,
  ): AsyncGenerator<ModelStreamEvent> {
    const input = toConverseInput(request);
    // The request and its first event are one retryable unit: nothing has reached the caller yet.
    const { iterator, first } = await send(options, async (client, signal) => {
      const command = new ConverseStreamCommand({ modelId: request.model, ...input });
      addHeaders(command, options.headers);
      const output = await client.send(command, signal === undefined ? {} : { abortSignal: signal });
      const id = output.$metadata.requestId ?? `bedrock-${randomUUID()}`;
      const source: AsyncIterable<ConverseStreamOutput> = output.stream ?? emptyStream();
      const events = translateConverseStream(abortable(source, options.signal), id, request.model);
      const iterator = events[Symbol.asyncIterator]();
      return { iterator, first: await iterator.next() };
    });
    let exceeded = false;
    let result = first;
    try {
      while (!result.done) {
        // One Converse event can become several of ours; none is delivered after the caller aborted.
        if (options.signal?.aborted) throw options.signal.reason;
        const event = result.value;
        if (event.type === "message_delta" && event.stopReason === "model_context_window_exceeded") {
          exceeded = true;
        }
        yield event;
        result = await iterator.next();
      }
    } catch (error) {
      throw toBedrockError(error, { signal: options.signal, midStream: true });
    } finally {
      if (!result.done) await iterator.return?.(undefined);
    }
    if (exceeded) throw contextWindowExceeded(undefined);
  }

  return provider;
}

/**
 * A 200 response cut short because the context window filled up. It is an overflow like the
 * ValidationException, so it surfaces as the same typed error (without numbers: Bedrock gives none).
 */
function contextWindowExceeded(response: ModelResponse | undefined): PromptTooLongError {
  return new PromptTooLongError(
    "Bedrock stopped the response with model_context_window_exceeded: the prompt plus output filled the model's context window. Compact the conversation and retry.",
    { providerId: BEDROCK_PROVIDER_ID, source: "stop-reason", cause: response },
  );
}

function isCountTokensUnsupported(error: ProviderRequestError): boolean {
  const type = error.providerErrorType;
  if (
    type === "AccessDeniedException" ||
    type === "ResourceNotFoundException" ||
    type === "UnknownOperationException"
  ) {
    return true;
  }
  if (error.status === 404) return true;
  return type === "ValidationException" && COUNT_TOKENS_UNSUPPORTED.test(error.message);
}

interface HeaderCommand {
  middlewareStack: {
    add(
      middleware: (
        next: (args: { request: unknown }) => Promise<unknown>,
      ) => (args: { request: unknown }) => Promise<unknown>,
      options: { step: "build"; name: string },
    ): void;
  };
}

function addHeaders(command: unknown, headers: Record<string, string> | undefined): void {
  if (headers === undefined || Object.keys(headers).length === 0) return;
  (command as HeaderCommand).middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) Object.assign(request.headers, headers);
      return next(args);
    },
    { step: "build", name: "unforgetExtraHeaders" },
  );
}

async function* emptyStream(): AsyncGenerator<ConverseStreamOutput> {}

/** Stops reading the SDK stream as soon as the caller's signal fires, whatever the transport does. */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  if (signal === undefined) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () =>
      reject(
        new AbortedError("The Bedrock stream was aborted by its AbortSignal.", { cause: signal.reason }),
      );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {});
  try {
    while (true) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
    void iterator.return?.(undefined)?.catch?.(() => {});
  }
}
