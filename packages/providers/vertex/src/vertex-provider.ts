import { type GenerateContentRequest, type GenerativeModel, VertexAI } from "@google-cloud/vertexai";
import {
  ConfigurationError,
  type ModelProvider,
  type ModelStreamEvent,
  ProviderRequestError,
} from "@unforget/core";
import {
  type AttemptContext,
  createProviderRuntime,
  describeError,
  ModelResponseAccumulator,
  type ProviderRuntimeSettings,
  settingNamesOf,
  unexpectedResponseError,
  withSdkWarnings,
} from "@unforget/provider-runtime";
import {
  convertToVertexCountRequest,
  convertToVertexRequest,
  type VertexRequestBody,
} from "./convert-to-vertex-request.ts";
import { readVertexConnection, type VertexEnvironmentSettings } from "./vertex-environment.ts";
import { toVertexError, VERTEX_PROVIDER_ID } from "./vertex-error.ts";
import { digestRequestBody, translateVertexStream } from "./vertex-stream.ts";

/**
 * Settings of `createVertexProvider`. Every setting is read on the first request, never at import or
 * construction; the environment fallbacks are read at that moment too.
 */
export interface VertexProviderSettings extends ProviderRuntimeSettings, VertexEnvironmentSettings {
  /** Google Cloud project id. Falls back to GOOGLE_CLOUD_PROJECT, then GCLOUD_PROJECT. */
  project?: string;
  /** Region ("us-central1", "europe-west4", "global"). Falls back to GOOGLE_CLOUD_LOCATION, GOOGLE_CLOUD_REGION, CLOUD_ML_REGION, then "us-central1". */
  location?: string;
  /**
   * The API's root, `https://host[:port]` or `host[:port]` (the SDK always speaks https). Falls back to
   * GOOGLE_VERTEX_API_ENDPOINT, then the regional `<location>-aiplatform.googleapis.com`
   * (`aiplatform.googleapis.com` for "global").
   */
  baseURL?: string;
  /** A fixed OAuth token or a function returning one; replaces Application Default Credentials. */
  accessToken?: VertexEnvironmentSettings["accessToken"];
  /** Passed to google-auth-library's GoogleAuth (keyFilename, credentials, scopes, …) when no accessToken is given. */
  googleAuthOptions?: Record<string, unknown>;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
}

const VERTEX = { providerId: VERTEX_PROVIDER_ID, displayName: "Vertex AI" } as const;

/** The settings only this provider reads; any other key (beyond the shared ones) is refused. */
const VERTEX_SETTING_NAMES = settingNamesOf<Omit<VertexProviderSettings, keyof ProviderRuntimeSettings>>({
  project: true,
  location: true,
  baseURL: true,
  accessToken: true,
  googleAuthOptions: true,
  headers: true,
});

/** Vertex-specific request fields, passed as `providerOptions.vertex` on a `ModelRequest`. */
export interface VertexProviderOptions {
  /** Merged last into `generationConfig` (e.g. `{ topK: 40, responseMimeType: "application/json" }`). */
  generationConfig?: Record<string, unknown>;
  /** Gemini `safetySettings`, sent as given. */
  safetySettings?: unknown[];
  /** Billing labels. */
  labels?: Record<string, string>;
  /** A context-cache resource name (`projects/…/cachedContents/…`). */
  cachedContent?: string;
}

/** The Vertex `ModelProvider`. */
export interface VertexProvider extends ModelProvider {
  readonly providerId: typeof VERTEX_PROVIDER_ID;
}

/**
 * A `ModelProvider` for Gemini models on Vertex AI, on the unmodified `@google-cloud/vertexai` SDK
 * (generateContent, streamGenerateContent, countTokens). The SDK takes no abort signal, so an aborted or
 * timed-out attempt is abandoned rather than cancelled; no SDK type appears in the returned object.
 */
export function createVertexProvider(settings: VertexProviderSettings = {}): VertexProvider {
  const model = (vertex: VertexAI, modelId: string, attempt: AttemptContext): GenerativeModel => {
    const headers = { ...settings.headers, ...attempt.headers };
    return vertex.getGenerativeModel(
      { model: modelId },
      Object.keys(headers).length > 0 ? { customHeaders: new Headers(headers) } : {},
    );
  };
  const runtime = createProviderRuntime({
    ...VERTEX,
    factoryName: "createVertexProvider()",
    settingNames: VERTEX_SETTING_NAMES,
    // Gemini's thought summaries carry no signature: they go back as thought parts.
    unsignedThinking: "keep",
    capabilities: {
      nativeTokenCounting: true,
      nativeContextManagement: false,
      promptCaching: false,
      thinking: true,
    },
    settings,
    connect: (): VertexAI => connectVertex(settings),
    toError: toVertexError,
    async createMessage(vertex, request, attempt) {
      const body = convertToVertexRequest(request);
      const result = await model(vertex, request.model, attempt).generateContent(asSdkRequest(body));
      const accumulator = new ModelResponseAccumulator();
      let ended = false;
      for await (const event of translateVertexStream(
        [result.response],
        digestRequestBody(body),
        request.model,
      )) {
        accumulator.push(event);
        if (event.type === "message_stop") ended = true;
      }
      if (!ended) {
        throw unexpectedResponseError(VERTEX, {
          contentType: undefined,
          body: JSON.stringify(result.response),
          expected: "a Gemini response with a finish reason",
        });
      }
      return accumulator.finish();
    },
    async *streamMessage(vertex, request, attempt): AsyncGenerator<ModelStreamEvent> {
      const body = convertToVertexRequest(request);
      const result = await model(vertex, request.model, attempt).generateContentStream(asSdkRequest(body));
      // The SDK also aggregates the stream into `response`; we never use it, so its failure is expected.
      result.response.catch(() => {});
      yield* translateVertexStream(result.stream, digestRequestBody(body), request.model);
    },
    async countTokens(vertex, request, attempt) {
      const body = convertToVertexCountRequest(request);
      const result = await model(vertex, request.model, attempt).countTokens(asSdkRequest(body));
      if (typeof result.totalTokens !== "number") {
        throw new ProviderRequestError("Vertex AI countTokens answered without totalTokens.", {
          providerId: VERTEX_PROVIDER_ID,
          retryable: false,
          providerErrorType: "malformed_response",
        });
      }
      return result.totalTokens;
    },
  });
  return runtime.provider;
}

/** Builds the SDK client from the settings and the environment (the first request calls this). */
function connectVertex(settings: VertexProviderSettings): VertexAI {
  const { project, location, apiEndpoint } = readVertexConnection(settings.env ?? process.env, settings);
  const googleAuthOptions: Record<string, unknown> = { ...settings.googleAuthOptions };
  const token = settings.accessToken;
  if (token !== undefined) {
    // google-auth-library uses a given authClient as is and only calls getAccessToken() on it.
    googleAuthOptions.authClient = {
      getAccessToken: async () => ({ token: typeof token === "string" ? token : await token() }),
    };
  }
  try {
    // The SDK warns on every client that it is deprecated (docs/decisions/0003): once per process is enough.
    return withSdkWarnings(
      "@google-cloud/vertexai",
      () =>
        new VertexAI({
          project,
          location,
          ...(apiEndpoint === undefined ? {} : { apiEndpoint }),
          ...(Object.keys(googleAuthOptions).length > 0
            ? { googleAuthOptions: googleAuthOptions as never }
            : {}),
        }),
    );
  } catch (error) {
    throw new ConfigurationError(`Vertex AI client settings were rejected: ${describeError(error)}`, {
      setting: "googleAuthOptions",
      cause: error,
    });
  }
}

function asSdkRequest(body: VertexRequestBody): GenerateContentRequest {
  // Our body is the REST shape; the SDK's types lag the API (thought parts, thinkingConfig, countTokens fields).
  return body as unknown as GenerateContentRequest;
}
