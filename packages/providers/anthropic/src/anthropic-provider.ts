import { BaseAnthropic } from "@anthropic-ai/sdk";
import { Messages as BetaMessages } from "@anthropic-ai/sdk/resources/beta/messages/messages";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";
import { Models } from "@anthropic-ai/sdk/resources/models";
import {
  ConfigurationError,
  type ModelLimits,
  type ModelLimitsEntry,
  type ModelProvider,
  type ModelStreamEvent,
  ProviderRequestError,
  type RequestOptions,
} from "@unforget/core";
import {
  type AttemptContext,
  createProviderRuntime,
  type ProviderRuntimeSettings,
  settingNamesOf,
  unexpectedResponseError,
} from "@unforget/provider-runtime";
import {
  type AnthropicEnvironmentSettings,
  CUSTOM_HEADERS_VARIABLE,
  readAnthropicEnvironment,
} from "./anthropic-environment.ts";
import { ANTHROPIC_PROVIDER_ID, toAnthropicError } from "./anthropic-error.ts";
import { withSdkNotices } from "./anthropic-sdk-notices.ts";
import { AnthropicStreamTranslator, responseFromWire } from "./anthropic-stream.ts";
import {
  ANTHROPIC_UNSIGNED_THINKING,
  type AnthropicRequest,
  convertToAnthropicCountRequest,
  convertToAnthropicRequest,
  type WireObject,
} from "./convert-to-anthropic-request.ts";

/**
 * Settings for `createAnthropicProvider`. Every field is optional; environment fallbacks are read on the
 * first request, never at import or construction.
 */
export interface AnthropicProviderSettings extends ProviderRuntimeSettings, AnthropicEnvironmentSettings {
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
  /** Custom fetch (for tests or instrumentation). */
  fetch?: typeof globalThis.fetch;
}

/** Anthropic-specific request fields, passed as `providerOptions.anthropic` on a `ModelRequest`. */
export interface AnthropicProviderOptions {
  /** Beta flags, merged into the `anthropic-beta` header with the ones the request's features need. */
  betas?: string[];
  /** Any other field goes into the request body as it is, in the API's snake_case (`top_k`, `service_tier`, …). */
  [field: string]: unknown;
}

/** The Anthropic provider: the core contract plus a call that learns a model's limits from the API. */
export interface AnthropicProvider extends ModelProvider {
  readonly providerId: typeof ANTHROPIC_PROVIDER_ID;
  /**
   * Called when a deployment wants exact limits: reads `GET /v1/models/{id}` (`max_input_tokens`,
   * `max_tokens`), remembers them for `getModelLimits`, and returns them (a maximum learned earlier from a
   * prompt-too-long error still bounds the window). Never throws: on any failure it returns the limits
   * known so far.
   */
  fetchModelLimits(model: string, options?: RequestOptions): Promise<ModelLimits>;
}

const ANTHROPIC = { providerId: ANTHROPIC_PROVIDER_ID, displayName: "The Anthropic API" } as const;

/** The settings only this provider reads; any other key (beyond the shared ones) is refused. */
const ANTHROPIC_SETTING_NAMES = settingNamesOf<
  Omit<AnthropicProviderSettings, keyof ProviderRuntimeSettings>
>({
  apiKey: true,
  authToken: true,
  baseURL: true,
  headers: true,
  fetch: true,
});

/** Per-attempt timeout when neither the call nor the settings give one: the SDK's own default. */
const DEFAULT_TIMEOUT_MS = 600_000;
/** The runtime times every attempt; the SDK's own timer is pushed past any realistic call. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The SDK calls used, typed loosely so that no SDK type leaks into this module's surface. */
interface MessagesEndpoint {
  create(
    body: WireObject,
    options: object,
  ): { withResponse(): Promise<{ data: unknown; response: Response }> };
  countTokens(body: WireObject, options: object): Promise<unknown>;
}

/**
 * The SDK's client with the resources the provider calls and no other: `Anthropic` brings every resource of the
 * API (files, skills, organizations, the whole beta), about 900 KB that a bundle would otherwise compile at every
 * start (BENCHMARKS.md, "unforget -p start-up"). `BaseAnthropic` is the SDK's own base of `Anthropic`.
 */
class AnthropicClient extends BaseAnthropic {
  readonly messages = new Messages(this);
  readonly models = new Models(this);
  readonly beta = { messages: new BetaMessages(this) };
}

/** Creates a `ModelProvider` for the Anthropic Messages API (or any server that speaks it). */
export function createAnthropicProvider(settings: AnthropicProviderSettings = {}): AnthropicProvider {
  const runtime = createProviderRuntime({
    ...ANTHROPIC,
    factoryName: "createAnthropicProvider()",
    settingNames: ANTHROPIC_SETTING_NAMES,
    // The API rejects a thinking block without its signature.
    unsignedThinking: ANTHROPIC_UNSIGNED_THINKING,
    capabilities: {
      nativeTokenCounting: true,
      nativeContextManagement: true,
      promptCaching: true,
      thinking: true,
    },
    settings,
    defaultTimeoutMs: DEFAULT_TIMEOUT_MS,
    connect: (): AnthropicClient => connectAnthropic(settings),
    toError: toAnthropicError,
    async createMessage(client, request, attempt) {
      const { data, response } = await send(client, convertToAnthropicRequest(request), attempt);
      const contentType = response.headers.get("content-type") ?? undefined;
      if (!contentType?.includes("json") || !isMessage(data)) {
        const body = typeof data === "string" ? data : JSON.stringify(data);
        throw unexpectedResponseError(ANTHROPIC, { contentType, body, expected: "a Messages API message" });
      }
      return responseFromWire(data);
    },
    async *streamMessage(client, request, attempt): AsyncGenerator<ModelStreamEvent> {
      const call = convertToAnthropicRequest(request);
      const { data, response } = await send(
        client,
        { ...call, body: { ...call.body, stream: true } },
        attempt,
      );
      const contentType = response.headers.get("content-type") ?? undefined;
      if (!contentType?.includes("text/event-stream")) {
        // The SDK reads the body only when its stream is iterated: it is still ours to quote.
        const body = await response.text();
        throw unexpectedResponseError(ANTHROPIC, { contentType, body, expected: "an event stream" });
      }
      const translator = new AnthropicStreamTranslator();
      for await (const raw of data as AsyncIterable<unknown>) yield* translator.translate(raw);
    },
    async countTokens(client, request, attempt) {
      const { body, betas } = convertToAnthropicCountRequest(request);
      const { api, extra } = messagesApi(client, betas);
      const result = (await api.countTokens({ ...body, ...extra }, sdkOptions(attempt))) as {
        input_tokens?: unknown;
      };
      if (typeof result.input_tokens !== "number") {
        throw new ProviderRequestError(
          "The counting endpoint answered without input_tokens; set nativeTokenCounting: false for a server without it.",
          { providerId: ANTHROPIC_PROVIDER_ID, retryable: false, providerErrorType: "malformed_response" },
        );
      }
      return result.input_tokens;
    },
  });

  return {
    ...runtime.provider,
    async fetchModelLimits(model: string, options: RequestOptions = {}): Promise<ModelLimits> {
      try {
        const info = (await runtime.call(options, (client, attempt) =>
          client.models.retrieve(model, undefined, sdkOptions(attempt)),
        )) as unknown as { max_input_tokens?: unknown; max_tokens?: unknown };
        const entry: Partial<ModelLimitsEntry> = {};
        if (typeof info.max_input_tokens === "number") entry.contextWindow = info.max_input_tokens;
        if (typeof info.max_tokens === "number") entry.maxOutputTokens = info.max_tokens;
        if (Object.keys(entry).length > 0) runtime.limits.set(model, entry);
      } catch {
        // Offline registry values stand; getModelLimits never fails.
      }
      return runtime.limits.get(model);
    },
  };
}

/** Builds the SDK client from the settings and the environment (the first request calls this). */
function connectAnthropic(settings: AnthropicProviderSettings): AnthropicClient {
  const env = settings.env ?? process.env;
  const { problem, connection } = readAnthropicEnvironment(env, settings);
  if (connection === undefined) {
    throw new ConfigurationError(problem?.message ?? "No Anthropic connection settings.", {
      setting: problem?.setting ?? "ANTHROPIC_API_KEY",
    });
  }
  const options: ConstructorParameters<typeof BaseAnthropic>[0] = {
    baseURL: connection.baseURL,
    maxRetries: 0,
    timeout: LONGEST_TIMER_MS,
    // Both set, one of them null, so the SDK never falls back to process.env on its own.
    ...("apiKey" in connection.credentials
      ? { apiKey: connection.credentials.apiKey, authToken: null }
      : { apiKey: null, authToken: connection.credentials.authToken }),
  };
  if (Object.keys(connection.headers).length > 0) options.defaultHeaders = connection.headers;
  if (settings.fetch) options.fetch = settings.fetch;
  // SDK 1.14 reads ANTHROPIC_CUSTOM_HEADERS from process.env by itself, in its constructor, and fails every
  // request on a line with an empty name; ours are parsed from `env`, so it must not see the variable.
  return withoutProcessEnv(CUSTOM_HEADERS_VARIABLE, () => new AnthropicClient(options));
}

/** The GA or the beta messages API (same paths; the beta one adds `anthropic-beta`), with the body extras. */
function messagesApi(client: AnthropicClient, betas: string[]): { api: MessagesEndpoint; extra: WireObject } {
  return betas.length > 0
    ? { api: client.beta.messages as unknown as MessagesEndpoint, extra: { betas } }
    : { api: client.messages as unknown as MessagesEndpoint, extra: {} };
}

/** Sends one Messages API call; the raw response comes along, for its content type. */
function send(
  client: AnthropicClient,
  call: AnthropicRequest,
  attempt: AttemptContext,
): Promise<{ data: unknown; response: Response }> {
  const { api, extra } = messagesApi(client, call.betas);
  // The SDK warns about deprecated models inside create(), synchronously, on every call.
  return withSdkNotices(() => api.create({ ...call.body, ...extra }, sdkOptions(attempt))).withResponse();
}

/**
 * A Messages API message, as far as translating it needs: a content array, and no other `type` than
 * "message" (some compatible servers leave the type out; an error body in a 200 has type "error").
 */
function isMessage(data: unknown): boolean {
  const message = data as { type?: unknown; content?: unknown } | null;
  return (
    typeof message === "object" &&
    message !== null &&
    (message.type === undefined || message.type === "message") &&
    Array.isArray(message.content)
  );
}

function sdkOptions(attempt: AttemptContext): { signal: AbortSignal; headers?: Record<string, string> } {
  return attempt.headers
    ? { signal: attempt.signal, headers: { ...attempt.headers } }
    : { signal: attempt.signal };
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
