import { randomUUID } from "node:crypto";
import type { BedrockRuntimeClientConfig } from "@aws-sdk/client-bedrock-runtime";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  CountTokensCommand,
} from "@aws-sdk/client-bedrock-runtime";
import {
  bedrockFoundationModelId,
  ConfigurationError,
  type ModelProvider,
  type ModelStreamEvent,
  type ProviderRequestError,
} from "@unforget/core";
import {
  type AttemptContext,
  createProviderRuntime,
  type ProviderRuntimeSettings,
  settingNamesOf,
  unexpectedResponseError,
} from "@unforget/provider-runtime";
import { type BedrockEnvironmentSettings, readBedrockEnvironment } from "./bedrock-environment.ts";
import { BEDROCK_PROVIDER_ID, toBedrockError } from "./bedrock-error.ts";
import { fromConverseResponse, translateConverseStream } from "./bedrock-stream.ts";
import { convertToBedrockConversation, convertToBedrockRequest } from "./convert-to-bedrock-request.ts";

export interface BedrockProviderSettings extends ProviderRuntimeSettings, BedrockEnvironmentSettings {
  /**
   * AWS region of the Bedrock Runtime endpoint. Falls back to `AWS_REGION`, `AWS_DEFAULT_REGION`, then the
   * `region` of the profile (`profile` / `AWS_PROFILE`, else `default`) in the shared AWS config file.
   */
  region?: string;
  /**
   * Endpoint URL (a VPC endpoint, a proxy, or a local fake). Without it the SDK uses the regional endpoint,
   * or `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` / `AWS_ENDPOINT_URL` when set.
   */
  baseURL?: string;
  /**
   * SigV4 credentials, or a function returning them (called by the SDK whenever it needs fresh ones). Falls
   * back to `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`, then the profile, then the
   * SDK's default chain (shared files, SSO, container and instance roles).
   */
  credentials?: BedrockEnvironmentSettings["credentials"];
  /** Bedrock API key, sent as `Authorization: Bearer`; wins over credentials. Falls back to `AWS_BEARER_TOKEN_BEDROCK`. */
  apiKey?: string;
  /** Named profile of the shared AWS files, for its credentials and region. Falls back to `AWS_PROFILE`. */
  profile?: string;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /**
   * The Smithy HTTP handler the SDK should use (e.g. a `NodeHttpHandler` for an HTTP/1.1-only proxy). The
   * default is the SDK's HTTP/2 handler. Passed to the SDK unchanged.
   */
  requestHandler?: unknown;
}

/**
 * Bedrock-specific request fields, passed as `providerOptions.bedrock` on a `ModelRequest`; other providers
 * ignore them.
 */
export interface BedrockProviderOptions {
  /** Merged into Converse `additionalModelRequestFields` (model-native fields, e.g. Claude's `top_k`). */
  additionalModelRequestFields?: Record<string, unknown>;
  /** Claude beta flags, sent as `additionalModelRequestFields.anthropic_beta`. */
  anthropicBeta?: string[];
  /** Converse `requestMetadata` (string key/value pairs for invocation logs). */
  requestMetadata?: Record<string, string>;
}

/** The Bedrock `ModelProvider`, with what it learned about CountTokens support. */
export interface BedrockProvider extends ModelProvider {
  readonly providerId: typeof BEDROCK_PROVIDER_ID;
  /** Model ids (as sent to CountTokens) found not to support native counting, with the reason. */
  readonly countTokensUnsupported: ReadonlyMap<string, string>;
}

const BEDROCK = { providerId: BEDROCK_PROVIDER_ID, displayName: "Bedrock" } as const;

/** The settings only this provider reads; any other key (beyond the shared ones) is refused. */
const BEDROCK_SETTING_NAMES = settingNamesOf<Omit<BedrockProviderSettings, keyof ProviderRuntimeSettings>>({
  region: true,
  baseURL: true,
  credentials: true,
  apiKey: true,
  profile: true,
  headers: true,
  requestHandler: true,
});

const COUNT_TOKENS_UNSUPPORTED =
  /(?:doesn't|does not|not) support(?:ed)?[^.]*count|count[^.]*not (?:supported|available)/i;

/**
 * Creates the Bedrock provider on `@aws-sdk/client-bedrock-runtime` (Converse, ConverseStream, CountTokens).
 * Settings and environment variables are read on the first request, not here. The SDK's own retries are
 * switched off: the shared runtime retries, so every provider behaves the same.
 */
export function createBedrockProvider(settings: BedrockProviderSettings = {}): BedrockProvider {
  const unsupported = new Map<string, string>();
  const runtime = createProviderRuntime({
    ...BEDROCK,
    factoryName: "createBedrockProvider()",
    settingNames: BEDROCK_SETTING_NAMES,
    // Claude on Bedrock rejects reasoning without its signature.
    unsignedThinking: "drop",
    capabilities: {
      nativeTokenCounting: true,
      nativeContextManagement: false,
      promptCaching: true,
      thinking: true,
    },
    settings,
    connect: (): Promise<BedrockRuntimeClient> => connectBedrock(settings),
    toError: toBedrockError,
    async createMessage(client, request, attempt) {
      const command = new ConverseCommand({ modelId: request.model, ...convertToBedrockRequest(request) });
      expectContentType(command, "json", "a Converse response (application/json)");
      const output = await client.send(withHeaders(command, settings.headers, attempt), {
        abortSignal: attempt.signal,
      });
      if (output.output?.message === undefined) {
        const { $metadata: _metadata, ...body } = output;
        throw unexpectedResponseError(BEDROCK, {
          contentType: "application/json",
          body: JSON.stringify(body),
          expected: "a Converse response with an output message",
        });
      }
      return fromConverseResponse(
        output,
        output.$metadata.requestId ?? `bedrock-${randomUUID()}`,
        request.model,
      );
    },
    async *streamMessage(client, request, attempt): AsyncGenerator<ModelStreamEvent> {
      const command = new ConverseStreamCommand({
        modelId: request.model,
        ...convertToBedrockRequest(request),
      });
      expectContentType(command, "application/vnd.amazon.eventstream", "an event stream");
      const output = await client.send(withHeaders(command, settings.headers, attempt), {
        abortSignal: attempt.signal,
      });
      const id = output.$metadata.requestId ?? `bedrock-${randomUUID()}`;
      if (output.stream !== undefined) yield* translateConverseStream(output.stream, id, request.model);
    },
    async countTokens(client, request, attempt) {
      const command = new CountTokensCommand({
        modelId: bedrockFoundationModelId(request.model),
        input: { converse: convertToBedrockConversation(request) },
      });
      const output = await client.send(withHeaders(command, settings.headers, attempt), {
        abortSignal: attempt.signal,
      });
      return output.inputTokens ?? 0;
    },
    nativeCountUnavailable(request) {
      if (request.messages.length === 0) return "CountTokens needs at least one message.";
      return unsupported.get(bedrockFoundationModelId(request.model));
    },
    onNativeCountFailed(request, error) {
      if (isCountTokensUnsupported(error)) {
        const modelId = bedrockFoundationModelId(request.model);
        unsupported.set(modelId, `Bedrock CountTokens does not support ${modelId} here: ${error.message}`);
      }
    },
  });
  return { ...runtime.provider, countTokensUnsupported: unsupported };
}

/** Builds the SDK client from the settings and the environment (the first request calls this). */
async function connectBedrock(settings: BedrockProviderSettings): Promise<BedrockRuntimeClient> {
  const { problem, connection } = await readBedrockEnvironment(settings.env ?? process.env, settings);
  if (connection === undefined) {
    throw new ConfigurationError(problem?.message ?? "No Bedrock connection settings.", {
      setting: problem?.setting ?? "region",
    });
  }
  const config: Record<string, unknown> = { region: connection.region, maxAttempts: 1 };
  if (settings.baseURL !== undefined) config.endpoint = settings.baseURL;
  if (settings.requestHandler !== undefined) config.requestHandler = settings.requestHandler;
  const authentication = connection.authentication;
  // The scheme is always chosen here: left to itself, the SDK prefers AWS_BEARER_TOKEN_BEDROCK from
  // process.env over everything, even over `credentials` and even when `env` says otherwise.
  if (authentication.kind === "api-key") {
    config.token = { token: authentication.apiKey };
    config.authSchemePreference = ["httpBearerAuth"];
  } else {
    config.authSchemePreference = ["sigv4"];
    if (authentication.kind === "credentials") config.credentials = authentication.credentials;
    if (authentication.kind === "profile") {
      // The SDK's default chain receives the client configuration: these name the profile and the files.
      Object.assign(config, { profile: authentication.profile }, connection.sharedFiles);
    }
  }
  return new BedrockRuntimeClient(config as BedrockRuntimeClientConfig);
}

function isCountTokensUnsupported(error: unknown): error is ProviderRequestError {
  const { providerErrorType: type, status, message } = error as Partial<ProviderRequestError>;
  if (
    type === "AccessDeniedException" ||
    type === "ResourceNotFoundException" ||
    type === "UnknownOperationException"
  ) {
    return true;
  }
  if (status === 404) return true;
  return type === "ValidationException" && COUNT_TOKENS_UNSUPPORTED.test(message ?? "");
}

/** The part of an SDK command this module touches: its middleware stack. */
interface MiddlewareCommand {
  middlewareStack: {
    add(
      middleware: (
        next: (args: { request: unknown }) => Promise<unknown>,
      ) => (args: { request: unknown }) => Promise<unknown>,
      options: { step: "build" | "deserialize"; name: string; priority?: "low" },
    ): void;
  };
}

/** The raw answer a deserializer receives (Smithy `HttpResponse`). */
interface RawResponse {
  statusCode?: number;
  headers?: Record<string, string | undefined>;
  body?: unknown;
}

/**
 * Checks a 200's content type before the SDK parses it: anything but `expected` (a gateway's HTML page,
 * the other format) is a typed error quoting what came back, not a parse failure or an empty answer.
 */
function expectContentType(command: unknown, expected: string, expectedInWords: string): void {
  (command as MiddlewareCommand).middlewareStack.add(
    (next) => async (args) => {
      const result = (await next(args)) as { response?: RawResponse };
      const response = result.response;
      if (response?.statusCode !== 200) return result;
      const contentType = Object.entries(response.headers ?? {}).find(
        ([name]) => name.toLowerCase() === "content-type",
      )?.[1];
      if (contentType?.includes(expected)) return result;
      throw unexpectedResponseError(BEDROCK, {
        contentType,
        body: await firstBytes(response.body),
        expected: expectedInWords,
      });
    },
    // Low priority in the deserialize step runs inside the SDK's deserializer: it sees the raw answer.
    { step: "deserialize", name: "unforgetExpectContentType", priority: "low" },
  );
}

/** The first bytes of a response body (a Node stream, bytes or text), as text; the rest is not read. */
async function firstBytes(body: unknown, limit = 1024): Promise<string> {
  if (typeof body === "string") return body.slice(0, limit);
  const chunks: Buffer[] = [];
  let length = 0;
  if (body instanceof Uint8Array) chunks.push(Buffer.from(body));
  else if (typeof body === "object" && body !== null && Symbol.asyncIterator in body) {
    for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
      const buffer = Buffer.from(chunk);
      chunks.push(buffer);
      length += buffer.length;
      if (length >= limit) break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

/** Adds the settings' and the call's headers to one command (the call's win). */
function withHeaders<Command>(
  command: Command,
  fromSettings: Record<string, string> | undefined,
  attempt: AttemptContext,
): Command {
  const headers = { ...fromSettings, ...attempt.headers };
  if (Object.keys(headers).length === 0) return command;
  (command as unknown as MiddlewareCommand).middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) Object.assign(request.headers, headers);
      return next(args);
    },
    { step: "build", name: "unforgetExtraHeaders" },
  );
  return command;
}
