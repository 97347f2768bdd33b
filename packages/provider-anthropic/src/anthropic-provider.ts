import Anthropic from "@anthropic-ai/sdk";
import {
  AbortedError,
  type CountTokensRequest,
  createLearnedModelLimits,
  createModelLimitsRegistry,
  createModelStream,
  DEFAULT_MAX_RETRIES,
  type ModelLimits,
  type ModelLimitsEntry,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStream,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  PromptTooLongError,
  type ProviderCapabilities,
  type RequestOptions,
  type TokenCount,
  throwIfAborted,
  withRetries,
} from "@unforget/core";
import { estimateRequestTokens } from "@unforget/tokens";
import { parseCustomHeaders } from "./anthropic-custom-headers.ts";
import { ANTHROPIC_PROVIDER_ID, toUnforgetError } from "./anthropic-error.ts";
import { AnthropicStreamTranslator } from "./anthropic-stream-translator.ts";
import {
  appliedEditsFromWire,
  contentBlockFromWire,
  countTokensBodyToWire,
  messageBodyToWire,
  requiredBetas,
  stopReasonFromWire,
  usageFromWire,
  type WireObject,
} from "./anthropic-wire.ts";

const DEFAULT_BASE_URL = "https://api.anthropic.com";
const DEFAULT_TIMEOUT_MS = 600_000;
const CUSTOM_HEADERS_VARIABLE = "ANTHROPIC_CUSTOM_HEADERS";
/** Sent as the key when a non-Anthropic base URL (a local compatible server) needs none. */
const PLACEHOLDER_API_KEY = "unforget-no-key";

/**
 * Settings for `createAnthropicProvider`. Every field is optional; environment fallbacks are read on the
 * first request, never at import or construction.
 */
export interface AnthropicProviderSettings {
  /** API key. Falls back to `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Bearer token used instead of an API key. Falls back to `ANTHROPIC_AUTH_TOKEN`. */
  authToken?: string;
  /** API root without `/v1`, for proxies and Anthropic-compatible servers. Falls back to `ANTHROPIC_BASE_URL`. */
  baseURL?: string;
  /**
   * Headers added to every request (e.g. `x-api-key` for servers that want it). Headers from
   * `ANTHROPIC_CUSTOM_HEADERS` (one `Name: value` per line) are added too; a header named here wins.
   */
  headers?: Record<string, string>;
  /** Retries after the first attempt for 408/409/429/5xx/529 and network errors. Default 2. */
  maxRetries?: number;
  /** First backoff delay in milliseconds when the server sends no `retry-after`. Default 500. */
  initialRetryDelayMs?: number;
  /** Per-attempt timeout in milliseconds. Default 600 000. */
  timeoutMs?: number;
  /** Use `POST /v1/messages/count_tokens`. Default true; set false for compatible servers without it. */
  nativeTokenCounting?: boolean;
  /** Context window / output limit overrides keyed by model id or canonical family. */
  modelLimits?: Record<string, Partial<ModelLimitsEntry>>;
  /** Custom fetch (for tests or instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** Where environment fallbacks are read from. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/** The Anthropic provider: the core contract plus a call that learns a model's limits from the API. */
export interface AnthropicProvider extends ModelProvider {
  /**
   * Called when a deployment wants exact limits: reads `GET /v1/models/{id}` (`max_input_tokens`,
   * `max_tokens`), remembers them for `getModelLimits`, and returns them (a maximum learned earlier from a
   * prompt-too-long error still bounds the window). Never throws: on any failure it returns the limits
   * known so far.
   */
  fetchModelLimits(model: string, options?: RequestOptions): Promise<ModelLimits>;
}

/** The two SDK calls used, typed loosely so that no SDK type leaks into this module's surface. */
interface MessagesEndpoint {
  create(body: WireObject, options: object): Promise<unknown>;
  countTokens(body: WireObject, options: object): Promise<unknown>;
}

interface ResolvedSettings {
  client: Anthropic;
  maxRetries: number;
  initialRetryDelayMs: number;
  nativeTokenCounting: boolean;
}

/** Creates a `ModelProvider` for the Anthropic Messages API (or any server that speaks it). */
export function createAnthropicProvider(settings: AnthropicProviderSettings = {}): AnthropicProvider {
  let resolved: ResolvedSettings | undefined;
  // Overflow errors and the models endpoint both feed this one registry (see `learnFromPromptTooLong`).
  const limits = createLearnedModelLimits(
    createModelLimitsRegistry(settings.modelLimits ? { overrides: settings.modelLimits } : {}),
  );

  const resolve = (): ResolvedSettings => {
    if (resolved) return resolved;
    const env = settings.env ?? process.env;
    const baseURL = settings.baseURL ?? env.ANTHROPIC_BASE_URL ?? DEFAULT_BASE_URL;
    const authToken = settings.authToken ?? (settings.apiKey ? undefined : env.ANTHROPIC_AUTH_TOKEN);
    let apiKey = settings.apiKey ?? (authToken ? undefined : env.ANTHROPIC_API_KEY);
    if (!apiKey && !authToken) {
      if (baseURL.replace(/\/+$/, "") === DEFAULT_BASE_URL) {
        throw toUnforgetError(new Error("Could not resolve authentication method"));
      }
      apiKey = PLACEHOLDER_API_KEY;
    }
    const options: ConstructorParameters<typeof Anthropic>[0] = {
      baseURL,
      maxRetries: 0,
      timeout: settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    };
    if (apiKey) options.apiKey = apiKey;
    else options.authToken = authToken ?? null;
    const headers = mergeHeaders(parseCustomHeaders(env[CUSTOM_HEADERS_VARIABLE]), settings.headers);
    if (Object.keys(headers).length > 0) options.defaultHeaders = headers;
    if (settings.fetch) options.fetch = settings.fetch;
    resolved = {
      // SDK 1.14 reads ANTHROPIC_CUSTOM_HEADERS from process.env by itself, in its constructor, and fails every
      // request on a line with an empty name; ours are parsed above (from `env`), so it must not see the variable.
      client: withoutProcessEnv(CUSTOM_HEADERS_VARIABLE, () => new Anthropic(options)),
      maxRetries: settings.maxRetries ?? DEFAULT_MAX_RETRIES,
      initialRetryDelayMs: settings.initialRetryDelayMs ?? 500,
      nativeTokenCounting: settings.nativeTokenCounting ?? true,
    };
    return resolved;
  };

  const sdkOptions = (options: RequestOptions) => {
    const sdk: { signal?: AbortSignal; timeout?: number; headers?: Record<string, string> } = {};
    if (options.signal) sdk.signal = options.signal;
    if (options.timeoutMs !== undefined) sdk.timeout = options.timeoutMs;
    if (options.headers) sdk.headers = options.headers;
    return sdk;
  };

  const retrying = <T>(config: ResolvedSettings, options: RequestOptions, operation: () => Promise<T>) =>
    withRetries(
      async () => {
        try {
          return await operation();
        } catch (error) {
          throw toUnforgetError(error, options.signal ? { signal: options.signal } : {});
        }
      },
      {
        maxRetries: options.maxRetries ?? config.maxRetries,
        initialDelayMs: config.initialRetryDelayMs,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );

  /** The GA or the beta messages API (same paths; the beta one adds `anthropic-beta`), with the body extras. */
  const messagesApi = (
    config: ResolvedSettings,
    betas: string[],
  ): { api: MessagesEndpoint; extra: WireObject } =>
    betas.length > 0
      ? { api: config.client.beta.messages as unknown as MessagesEndpoint, extra: { betas } }
      : { api: config.client.messages as unknown as MessagesEndpoint, extra: {} };

  const send = (config: ResolvedSettings, body: WireObject, betas: string[], options: RequestOptions) => {
    const { api, extra } = messagesApi(config, betas);
    return api.create({ ...body, ...extra }, sdkOptions(options));
  };

  const provider: AnthropicProvider = {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: ANTHROPIC_PROVIDER_ID,
    capabilities: Object.freeze({
      nativeTokenCounting: settings.nativeTokenCounting ?? true,
      cacheEdits: true,
      nativeContextManagement: true,
      promptCaching: true,
      thinking: true,
    } satisfies ProviderCapabilities),

    async createMessage(request: ModelRequest, options: RequestOptions = {}): Promise<ModelResponse> {
      throwIfAborted(options.signal);
      const config = resolve();
      const body = messageBodyToWire(request);
      try {
        const raw = await retrying(config, options, () =>
          send(config, body, requiredBetas(request), options),
        );
        return responseFromWire(raw);
      } catch (error) {
        limits.learnFromPromptTooLong(request.model, error);
        throw error;
      }
    },

    streamMessage(request: ModelRequest, options: RequestOptions = {}): ModelStream {
      return createModelStream(() => limits.learnFromStream(request.model, streamEvents(request, options)));
    },

    async countTokens(request: CountTokensRequest, options: RequestOptions = {}): Promise<TokenCount> {
      throwIfAborted(options.signal);
      const heuristic = (reason: string): TokenCount => ({
        inputTokens: estimateRequestTokens(request),
        method: "heuristic",
        fallbackReason: reason,
      });
      let config: ResolvedSettings;
      try {
        config = resolve();
      } catch (error) {
        return heuristic(`Native counting is unavailable: ${(error as Error).message}`);
      }
      if (!config.nativeTokenCounting) return heuristic("Native token counting is disabled in the settings.");
      const body = countTokensBodyToWire(request);
      const betas = requiredBetas(request);
      try {
        const result = await retrying(config, options, () => {
          const { api, extra } = messagesApi(config, betas);
          return api.countTokens({ ...body, ...extra }, sdkOptions(options));
        });
        const inputTokens = (result as { input_tokens?: unknown }).input_tokens;
        if (typeof inputTokens !== "number")
          return heuristic("The counting endpoint returned no input_tokens.");
        return { inputTokens, method: "native" };
      } catch (error) {
        if (error instanceof AbortedError) throw error;
        return heuristic(`The counting endpoint failed: ${(error as Error).message}`);
      }
    },

    getModelLimits(model: string): ModelLimits {
      return limits.get(model);
    },

    async fetchModelLimits(model: string, options: RequestOptions = {}): Promise<ModelLimits> {
      try {
        const config = resolve();
        const info = (await retrying(config, options, () =>
          config.client.models.retrieve(model, undefined, sdkOptions(options)),
        )) as unknown as { max_input_tokens?: unknown; max_tokens?: unknown };
        const entry: Partial<ModelLimitsEntry> = {};
        if (typeof info.max_input_tokens === "number") entry.contextWindow = info.max_input_tokens;
        if (typeof info.max_tokens === "number") entry.maxOutputTokens = info.max_tokens;
        if (Object.keys(entry).length > 0) limits.set(model, entry);
      } catch {
        // Offline registry values stand; getModelLimits never fails.
      }
      return limits.get(model);
    },
  };

  async function* streamEvents(
    request: ModelRequest,
    options: RequestOptions,
  ): AsyncGenerator<ModelStreamEvent> {
    throwIfAborted(options.signal);
    const config = resolve();
    const body = { ...messageBodyToWire(request), stream: true };
    const betas = requiredBetas(request);
    const translator = new AnthropicStreamTranslator();
    // Retry only until the first event arrives: later failures would repeat output already seen.
    const { iterator, first } = await retrying(config, options, async () => {
      const stream = (await send(config, body, betas, options)) as AsyncIterable<unknown>;
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      return { iterator, first };
    });
    let next = first;
    try {
      while (!next.done) {
        for (const event of translator.translate(next.value)) {
          if (event.type === "message_delta" && event.stopReason === "model_context_window_exceeded") {
            throw contextWindowExceeded(event.rawStopReason);
          }
          yield event;
        }
        next = await iterator.next();
      }
      // The SDK ends an aborted stream quietly; the caller must still learn that it was cut short.
      throwIfAborted(options.signal);
    } catch (error) {
      throw toUnforgetError(error, { inStream: true, ...(options.signal ? { signal: options.signal } : {}) });
    } finally {
      await iterator.return?.();
    }
  }

  return provider;
}

/** Runs a synchronous `build` with `name` absent from process.env, then restores it; no other code runs between. */
function withoutProcessEnv<T>(name: string, build: () => T): T {
  const saved = process.env[name];
  if (saved === undefined) return build();
  delete process.env[name];
  try {
    return build();
  } finally {
    process.env[name] = saved;
  }
}

/** Environment headers first, then the explicit ones, which win over a same-named header in any case. */
function mergeHeaders(
  fromEnvironment: Record<string, string>,
  explicit: Record<string, string> | undefined,
): Record<string, string> {
  const explicitNames = new Set(Object.keys(explicit ?? {}).map((name) => name.toLowerCase()));
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(fromEnvironment)) {
    if (!explicitNames.has(name.toLowerCase())) merged[name] = value;
  }
  return { ...merged, ...explicit };
}

function contextWindowExceeded(
  rawStopReason: string | undefined,
  response?: ModelResponse,
): PromptTooLongError {
  return new PromptTooLongError(
    `The model stopped because the context window is full (stop reason ${rawStopReason ?? "model_context_window_exceeded"}). Compact the conversation and retry.`,
    { providerId: ANTHROPIC_PROVIDER_ID, source: "stop-reason", ...(response ? { cause: response } : {}) },
  );
}

function responseFromWire(raw: unknown): ModelResponse {
  const message = (raw ?? {}) as Record<string, unknown>;
  const response: ModelResponse = {
    id: String(message.id ?? ""),
    model: String(message.model ?? ""),
    role: "assistant",
    content: Array.isArray(message.content) ? message.content.map(contentBlockFromWire) : [],
    stopReason: stopReasonFromWire(message.stop_reason),
    usage: usageFromWire(message.usage),
  };
  if (typeof message.stop_reason === "string") response.rawStopReason = message.stop_reason;
  if (typeof message.stop_sequence === "string") response.stopSequence = message.stop_sequence;
  const applied = appliedEditsFromWire(message.context_management);
  if (applied) response.appliedContextEdits = applied;
  if (response.stopReason === "model_context_window_exceeded") {
    throw contextWindowExceeded(response.rawStopReason, response);
  }
  return response;
}
