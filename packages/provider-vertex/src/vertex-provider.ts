import { type GenerateContentRequest, type GenerativeModel, VertexAI } from "@google-cloud/vertexai";
import {
  AbortedError,
  ConfigurationError,
  type CountTokensRequest,
  createLearnedModelLimits,
  createModelLimitsRegistry,
  createModelStream,
  DEFAULT_MAX_RETRIES,
  type ModelLimitsEntry,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  ModelResponseAccumulator,
  type ModelStream,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  type ProviderCapabilities,
  ProviderRequestError,
  type RequestOptions,
  type TokenCount,
  withRetries,
} from "@unforget/core";
import { estimateRequestTokens } from "@unforget/tokens";
import {
  buildVertexCountTokensBody,
  buildVertexRequest,
  type VertexRequestBody,
} from "./build-vertex-request.ts";
import { isRecord } from "./is-record.ts";
import { fromPayload, normalizeVertexError, VERTEX_PROVIDER_ID } from "./normalize-vertex-error.ts";
import { digestRequestBody, VertexEventTranslator } from "./vertex-event-translator.ts";

/** Supplies an OAuth access token; called before every request (cache it yourself if it is costly). */
export type VertexAccessTokenSource = string | (() => string | Promise<string>);

/**
 * Settings of `createVertexProvider`. Every setting is read on the first request, never at import or
 * construction; the environment fallbacks are read at that moment too.
 */
export interface VertexProviderSettings {
  /** Google Cloud project id. Falls back to GOOGLE_CLOUD_PROJECT, then GCLOUD_PROJECT. */
  project?: string;
  /** Region ("us-central1", "europe-west4", "global"). Falls back to GOOGLE_CLOUD_LOCATION, GOOGLE_CLOUD_REGION, CLOUD_ML_REGION, then "us-central1". */
  location?: string;
  /**
   * Host (and port) of the API, without scheme: the SDK always speaks https. Falls back to
   * GOOGLE_VERTEX_API_ENDPOINT, then the regional `<location>-aiplatform.googleapis.com`
   * (`aiplatform.googleapis.com` for "global"). A leading `https://` is accepted and stripped.
   */
  apiEndpoint?: string;
  /** A fixed OAuth token or a function returning one; replaces Application Default Credentials. */
  accessToken?: VertexAccessTokenSource;
  /** Passed to google-auth-library's GoogleAuth (keyFilename, credentials, scopes, …) when no accessToken is given. */
  googleAuthOptions?: Record<string, unknown>;
  /** Retries after the first attempt for 408/429/5xx and network failures. Default 2. */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled per retry. Default 500. */
  initialRetryDelayMs?: number;
  /** Upper bound of one backoff delay in milliseconds. Default 32 000. */
  maxRetryDelayMs?: number;
  /** Per-attempt timeout in milliseconds (no default: Vertex answers long generations slowly). */
  timeoutMs?: number;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
  /** Context window / output limit overrides, keyed by model id or canonical family. */
  modelLimits?: Record<string, Partial<ModelLimitsEntry>>;
  /** Where environment fallbacks are read from. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

interface ResolvedClient {
  vertex: VertexAI;
  project: string;
  location: string;
}

const CAPABILITIES: ProviderCapabilities = Object.freeze({
  nativeTokenCounting: true,
  cacheEdits: false,
  nativeContextManagement: false,
  promptCaching: false,
  thinking: true,
});

/**
 * A `ModelProvider` for Gemini models on Vertex AI, on the unmodified `@google-cloud/vertexai` SDK
 * (generateContent, streamGenerateContent, countTokens). Retries, abort and timeouts are handled here
 * because the SDK has no retries and no abort signal; no SDK type appears in the returned object.
 */
export function createVertexProvider(settings: VertexProviderSettings = {}): ModelProvider {
  let client: ResolvedClient | undefined;
  // Vertex's stated maximum is often a regional or quota cap below the model's window: learn it per instance.
  const limits = createLearnedModelLimits(
    createModelLimitsRegistry(settings.modelLimits ? { overrides: settings.modelLimits } : {}),
  );

  const resolveClient = (): ResolvedClient => {
    client ??= createClient(settings);
    return client;
  };

  const model = (modelId: string, options: RequestOptions | undefined): GenerativeModel => {
    const headers = { ...settings.headers, ...options?.headers };
    return resolveClient().vertex.getGenerativeModel(
      { model: modelId },
      Object.keys(headers).length > 0 ? { customHeaders: new Headers(headers) } : {},
    );
  };

  const retryOptions = (options: RequestOptions | undefined) => ({
    maxRetries: options?.maxRetries ?? settings.maxRetries ?? DEFAULT_MAX_RETRIES,
    ...(options?.signal === undefined ? {} : { signal: options.signal }),
    ...(settings.initialRetryDelayMs === undefined ? {} : { initialDelayMs: settings.initialRetryDelayMs }),
    ...(settings.maxRetryDelayMs === undefined ? {} : { maxDelayMs: settings.maxRetryDelayMs }),
  });

  const guard = <T>(promise: Promise<T>, options: RequestOptions | undefined): Promise<T> =>
    guardAttempt(promise, options?.signal, options?.timeoutMs ?? settings.timeoutMs);

  return {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: VERTEX_PROVIDER_ID,
    capabilities: CAPABILITIES,

    async createMessage(request: ModelRequest, options?: RequestOptions): Promise<ModelResponse> {
      const body = buildVertexRequest(request);
      const digest = digestRequestBody(body);
      const response = await withRetries(async () => {
        try {
          const result = await guard(
            model(request.model, options).generateContent(asSdkRequest(body)),
            options,
          );
          return result.response as unknown;
        } catch (error) {
          throw normalizeVertexError(error);
        }
      }, retryOptions(options)).catch((error: unknown) => {
        limits.learnFromPromptTooLong(request.model, error);
        throw error;
      });
      const translator = new VertexEventTranslator(digest, request.model);
      const accumulator = new ModelResponseAccumulator();
      for (const event of translator.push(response)) accumulator.push(event);
      for (const event of translator.finish()) accumulator.push(event);
      return accumulator.finish();
    },

    streamMessage(request: ModelRequest, options?: RequestOptions): ModelStream {
      const events = async function* (): AsyncGenerator<ModelStreamEvent> {
        const body = buildVertexRequest(request);
        const translator = new VertexEventTranslator(digestRequestBody(body), request.model);
        // Opening the stream and its first chunk are retried; after the first event nothing is.
        const { iterator, first } = await withRetries(async () => {
          let opened: AsyncIterator<unknown> | undefined;
          try {
            const result = await guard(
              model(request.model, options).generateContentStream(asSdkRequest(body)),
              options,
            );
            // The SDK also aggregates the stream into `response`; we never use it, so its failure is expected.
            result.response.catch(() => {});
            opened = result.stream[Symbol.asyncIterator]() as AsyncIterator<unknown>;
            const step = await guard(opened.next(), options);
            throwIfErrorChunk(step.value, "error-response");
            return { iterator: opened, first: step };
          } catch (error) {
            abandon(opened);
            throw normalizeVertexError(error);
          }
        }, retryOptions(options));
        try {
          let step = first;
          while (!step.done) {
            yield* translator.push(step.value);
            step = await guard(iterator.next(), options);
            if (!step.done) throwIfErrorChunk(step.value, "stream-error");
          }
          yield* translator.finish();
        } catch (error) {
          abandon(iterator);
          throw normalizeVertexError(error, "stream-error");
        }
      };
      return createModelStream(() => limits.learnFromStream(request.model, events()));
    },

    async countTokens(request: CountTokensRequest, options?: RequestOptions): Promise<TokenCount> {
      try {
        const body = buildVertexCountTokensBody(request);
        const result = await withRetries(async () => {
          try {
            return await guard(model(request.model, options).countTokens(asSdkRequest(body)), options);
          } catch (error) {
            throw normalizeVertexError(error);
          }
        }, retryOptions(options));
        if (typeof result.totalTokens !== "number") {
          throw new ProviderRequestError("Vertex AI countTokens answered without totalTokens.", {
            providerId: VERTEX_PROVIDER_ID,
            retryable: false,
            providerErrorType: "malformed_response",
          });
        }
        return { inputTokens: result.totalTokens, method: "native" };
      } catch (error) {
        if (error instanceof AbortedError) throw error;
        return {
          inputTokens: estimateRequestTokens(request),
          method: "heuristic",
          fallbackReason: `Vertex AI countTokens failed (${error instanceof Error ? error.message : String(error)}); used the heuristic estimate.`,
        };
      }
    },

    getModelLimits(modelId: string) {
      return limits.get(modelId);
    },
  };
}

function createClient(settings: VertexProviderSettings): ResolvedClient {
  const env = settings.env ?? process.env;
  const project = settings.project ?? env.GOOGLE_CLOUD_PROJECT ?? env.GCLOUD_PROJECT;
  if (!project) {
    throw new ConfigurationError(
      "No Google Cloud project for Vertex AI: pass `project` to createVertexProvider or set GOOGLE_CLOUD_PROJECT.",
      { setting: "project" },
    );
  }
  const location =
    settings.location ??
    env.GOOGLE_CLOUD_LOCATION ??
    env.GOOGLE_CLOUD_REGION ??
    env.CLOUD_ML_REGION ??
    "us-central1";
  let apiEndpoint = settings.apiEndpoint ?? env.GOOGLE_VERTEX_API_ENDPOINT;
  if (apiEndpoint !== undefined) {
    if (/^http:\/\//i.test(apiEndpoint)) {
      throw new ConfigurationError(
        `apiEndpoint "${apiEndpoint}" uses http://, but @google-cloud/vertexai always connects with https://. ` +
          "Pass host:port of an HTTPS endpoint (for a local fake, trust its CA with NODE_EXTRA_CA_CERTS).",
        { setting: "apiEndpoint" },
      );
    }
    apiEndpoint = apiEndpoint.replace(/^https:\/\//i, "").replace(/\/+$/, "");
  } else if (location === "global") {
    // The SDK would build "global-aiplatform.googleapis.com", which does not exist.
    apiEndpoint = "aiplatform.googleapis.com";
  }
  const googleAuthOptions: Record<string, unknown> = { ...settings.googleAuthOptions };
  const token = settings.accessToken;
  if (token !== undefined) {
    // google-auth-library uses a given authClient as is and only calls getAccessToken() on it.
    googleAuthOptions.authClient = {
      getAccessToken: async () => ({ token: typeof token === "string" ? token : await token() }),
    };
  }
  try {
    const vertex = new VertexAI({
      project,
      location,
      ...(apiEndpoint === undefined ? {} : { apiEndpoint }),
      ...(Object.keys(googleAuthOptions).length > 0 ? { googleAuthOptions: googleAuthOptions as never } : {}),
    });
    return { vertex, project, location };
  } catch (error) {
    throw new ConfigurationError(
      `Vertex AI client settings were rejected: ${error instanceof Error ? error.message : String(error)}`,
      { setting: "googleAuthOptions", cause: error },
    );
  }
}

function asSdkRequest(body: VertexRequestBody): GenerateContentRequest {
  // Our body is the REST shape; the SDK's types lag the API (thought parts, thinkingConfig, countTokens fields).
  return body as unknown as GenerateContentRequest;
}

function throwIfErrorChunk(chunk: unknown, source: "error-response" | "stream-error"): void {
  if (isRecord(chunk) && isRecord(chunk.error)) {
    const error = chunk.error;
    throw fromPayload(
      {
        ...(typeof error.code === "number" ? { code: error.code } : {}),
        ...(typeof error.message === "string" ? { message: error.message } : {}),
        ...(typeof error.status === "string" ? { status: error.status } : {}),
        ...(Array.isArray(error.details) ? { details: error.details } : {}),
      },
      source,
      chunk,
    );
  }
}

/**
 * Races one SDK call against the abort signal and the timeout. The SDK cannot cancel its fetch, so an
 * aborted or timed-out request is abandoned: the caller gets its answer at once and the late response
 * is discarded when (if) it arrives.
 */
function guardAttempt<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): Promise<T> {
  if (signal === undefined && timeoutMs === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cleanup = () => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      cleanup();
      reject(
        new AbortedError("The Vertex AI request was aborted by its AbortSignal.", { cause: signal?.reason }),
      );
    };
    if (signal?.aborted) {
      onAbort();
      promise.catch(() => {});
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        cleanup();
        reject(
          new ProviderRequestError(
            `Vertex AI did not answer within ${timeoutMs} ms; the attempt was abandoned.`,
            {
              providerId: VERTEX_PROVIDER_ID,
              retryable: true,
              providerErrorType: "timeout",
            },
          ),
        );
      }, timeoutMs);
    }
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}

function abandon(iterator: AsyncIterator<unknown> | undefined): void {
  // return() waits for the pending read, so it is not awaited; its outcome no longer matters.
  iterator?.return?.().catch(() => {});
}
