import {
  AbortedError,
  type CountTokensRequest,
  createModelLimitsRegistry,
  type ModelLimits,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStream,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  type ProviderCapabilities,
  type RequestOptions,
  type TokenCount,
  type UnforgetError,
} from "@unforget/core";
import { connectOnce } from "./connect-once.ts";
import { describeError } from "./errors/describe-error.ts";
import { noticeDeprecatedModel } from "./errors/notices.ts";
import { createLearnedModelLimits, type LearnedModelLimits } from "./learned-model-limits.ts";
import { type ProviderRuntimeSettings, SHARED_SETTING_NAMES } from "./provider-settings.ts";
import { heuristicTokenCount } from "./request/heuristic-token-count.ts";
import { checkSettingNames } from "./request/known-keys.ts";
import { createModelStream } from "./request/model-stream.ts";
import {
  type PreparedRequest,
  prepareRequest,
  type UnsignedThinkingPolicy,
} from "./request/prepare-request.ts";
import type { AttemptContext, ErrorContext } from "./retry/provider-attempt.ts";
import { contextWindowExceeded, createRetriedCalls } from "./retry/retried-calls.ts";
import { throwIfAborted } from "./retry/retry.ts";

/**
 * What makes a provider a provider: its settings, how it connects, how it sends a request and translates the
 * answer, and how it maps its SDK's errors. Retries, timeouts, aborts, learned limits, the heuristic
 * fallback and the stream rules are the runtime's, the same for every provider.
 */
export interface ProviderDefinition<Client, Id extends string = string> {
  /** Stable provider id, as in `ModelProvider.providerId`. */
  providerId: Id;
  /** How messages name the provider: "The Anthropic API", "Bedrock", "Vertex AI". */
  displayName: string;
  /** How messages name the factory that takes the settings: "createBedrockProvider()". */
  factoryName: string;
  /**
   * The provider's own setting names (`settingNamesOf`). With the shared ones, the only keys `settings` may
   * have: any other is refused at creation with the name it was probably meant to be, never ignored.
   */
  settingNames: readonly string[];
  /** Static capabilities; `nativeTokenCounting` is switched off by the setting of that name. */
  capabilities: ProviderCapabilities;
  /** Whether thinking blocks without a signature are dropped before conversion (the API rejects them) or kept. */
  unsignedThinking: UnsignedThinkingPolicy;
  /** The settings the caller gave (only the shared fields are read here). */
  settings: ProviderRuntimeSettings;
  /** Per-attempt timeout when neither the call nor the settings give one; none when absent. */
  defaultTimeoutMs?: number;
  /** Called on the first request (and again after a failed one): reads settings and environment, builds the SDK client. */
  connect(): Client | Promise<Client>;
  /** Called for every failure that is not already a typed error, an abort or a timeout: maps it to a typed error. */
  toError(error: unknown, context: ErrorContext): UnforgetError;
  /** Called once per attempt of `createMessage`: sends the request and translates the whole response. */
  createMessage(client: Client, request: PreparedRequest, attempt: AttemptContext): Promise<ModelResponse>;
  /**
   * Called once per attempt of `streamMessage`: opens the stream and yields the translated events. It yields
   * `message_stop` only when the wire said the message ended; a source that ends without it is truncated.
   */
  streamMessage(
    client: Client,
    request: PreparedRequest,
    attempt: AttemptContext,
  ): AsyncIterable<ModelStreamEvent>;
  /** Called once per attempt of a native count; absent when the provider has no counting endpoint. */
  countTokens?(
    client: Client,
    request: PreparedRequest<CountTokensRequest>,
    attempt: AttemptContext,
  ): Promise<number>;
  /** Called before counting: a reason to answer with the heuristic without a call, or undefined to count natively. */
  nativeCountUnavailable?(request: PreparedRequest<CountTokensRequest>): string | undefined;
  /** Called when native counting failed for good, before the heuristic answers (to remember an unsupported model, say). */
  onNativeCountFailed?(request: PreparedRequest<CountTokensRequest>, error: UnforgetError): void;
}

/** A provider's runtime: the `ModelProvider` itself, and what the provider's extra calls need. */
export interface ProviderRuntime<Client, Id extends string = string> {
  /** The contract implementation, ready to return (or to extend with provider-specific calls). */
  readonly provider: ModelProvider & { readonly providerId: Id };
  /** This instance's limits: the registry with the `modelLimits` overrides, plus what overflow errors taught it. */
  readonly limits: LearnedModelLimits;
  /** Runs one extra call (a models endpoint, say) with the same connection, retries, timeout, abort and error mapping. */
  call<T>(options: RequestOptions, run: (client: Client, attempt: AttemptContext) => Promise<T>): Promise<T>;
}

/**
 * Builds a provider from its definition. Nothing is read or connected until the first request; only the
 * setting names are checked here (`ConfigurationError` for a key the provider does not read).
 */
export function createProviderRuntime<Client, Id extends string>(
  definition: ProviderDefinition<Client, Id>,
): ProviderRuntime<Client, Id> {
  const settings = checkSettingNames(definition.factoryName, definition.settings, [
    ...SHARED_SETTING_NAMES,
    ...definition.settingNames,
  ]);
  const client = connectOnce(() => definition.connect());
  const limits = createLearnedModelLimits(
    createModelLimitsRegistry({
      ...(settings.modelLimits === undefined ? {} : { overrides: settings.modelLimits }),
      ...(settings.onUnknownModel === undefined ? {} : { onUnknownModel: settings.onUnknownModel }),
    }),
  );
  const nativeTokenCounting =
    definition.capabilities.nativeTokenCounting &&
    definition.countTokens !== undefined &&
    settings.nativeTokenCounting !== false;

  const calls = createRetriedCalls(definition, client);
  /**
   * The request as the definition receives it: checked, strings as blocks, unsigned thinking per the
   * policy. A deprecated model is named once per process.
   */
  const prepare = <Request extends CountTokensRequest>(given: Request): PreparedRequest<Request> => {
    const request = prepareRequest(given, definition.unsignedThinking);
    if (typeof request.model === "string") noticeDeprecatedModel(request.model);
    return request;
  };

  const provider: ModelProvider & { readonly providerId: Id } = {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: definition.providerId,
    capabilities: Object.freeze({ ...definition.capabilities, nativeTokenCounting }),

    async createMessage(given: ModelRequest, options: RequestOptions = {}): Promise<ModelResponse> {
      const request = prepare(given);
      try {
        const response = await calls.call(options, (connected, attempt) =>
          definition.createMessage(connected, request, attempt),
        );
        if (response.stopReason === "model_context_window_exceeded") {
          throw contextWindowExceeded(definition, response.rawStopReason, response);
        }
        return response;
      } catch (error) {
        limits.learnFromPromptTooLong(request.model, error);
        throw error;
      }
    },

    streamMessage(given: ModelRequest, options: RequestOptions = {}): ModelStream {
      // Checked when the stream is read, so a bad request fails the stream like any other failure.
      async function* events(): AsyncGenerator<ModelStreamEvent> {
        const request = prepare(given);
        yield* limits.learnFromStream(
          request.model,
          calls.stream(options, (connected, attempt) =>
            definition.streamMessage(connected, request, attempt),
          ),
        );
      }
      return createModelStream(events);
    },

    async countTokens(given: CountTokensRequest, options: RequestOptions = {}): Promise<TokenCount> {
      throwIfAborted(options.signal);
      const request = prepare(given);
      const count = definition.countTokens;
      if (!nativeTokenCounting || count === undefined) {
        return heuristicTokenCount(
          request,
          `${definition.displayName} native token counting is disabled in the settings (nativeTokenCounting: false).`,
        );
      }
      const unavailable = definition.nativeCountUnavailable?.(request);
      if (unavailable !== undefined) return heuristicTokenCount(request, unavailable);
      try {
        const inputTokens = await calls.call(options, (connected, attempt) =>
          count(connected, request, attempt),
        );
        return { inputTokens, method: "native" };
      } catch (error) {
        if (error instanceof AbortedError) throw error;
        definition.onNativeCountFailed?.(request, error as UnforgetError);
        return heuristicTokenCount(
          request,
          `${definition.displayName} native token counting failed (${describeError(error)}); the heuristic estimate was used.`,
        );
      }
    },

    getModelLimits(model: string): ModelLimits {
      return limits.get(model);
    },
  };

  return { provider, limits, call: calls.call };
}
