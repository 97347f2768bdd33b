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
    providerId: BEDROCK_PROVIDER_ID,
    displayName: "Bedrock",
    capabilities: {
      nativeTokenCounting: true,
      cacheEdits: false,
      nativeContextManagement: false,
      promptCaching: true,
      thinking: true,
    },
    settings,
    connect: (): Promise<BedrockRuntimeClient> => connectBedrock(settings),
    toError: toBedrockError,
    async createMessage(client, request, attempt) {
      const command = new ConverseCommand({ modelId: request.model, ...convertToBedrockRequest(request) });
      const output = await client.send(withHeaders(command, settings.headers, attempt), {
        abortSignal: attempt.signal,
      });
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

/** Adds the settings' and the call's headers to one command (the call's win). */
function withHeaders<Command>(
  command: Command,
  fromSettings: Record<string, string> | undefined,
  attempt: AttemptContext,
): Command {
  const headers = { ...fromSettings, ...attempt.headers };
  if (Object.keys(headers).length === 0) return command;
  (command as unknown as HeaderCommand).middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) Object.assign(request.headers, headers);
      return next(args);
    },
    { step: "build", name: "unforgetExtraHeaders" },
  );
  return command;
}
