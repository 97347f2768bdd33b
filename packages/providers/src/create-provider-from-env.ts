import { ConfigurationError, type ModelProvider } from "@unforget/core";
import { type AnthropicProviderSettings, createAnthropicProvider } from "@unforget/provider-anthropic";
import { type BedrockProviderSettings, createBedrockProvider } from "@unforget/provider-bedrock";
import { createVertexProvider, type VertexProviderSettings } from "@unforget/provider-vertex";

export const PROVIDER_NAMES = ["anthropic", "bedrock", "vertex"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Model used when `UNFORGET_MODEL` is not set, per provider (in that provider's naming). */
export const DEFAULT_MODELS: Readonly<Record<ProviderName, string>> = Object.freeze({
  anthropic: "claude-sonnet-4-6",
  bedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
  vertex: "gemini-2.5-pro",
});

export interface CreateProviderFromEnvOptions {
  /** Where to read the variables. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Extra settings for the Anthropic provider (they win over the environment). */
  anthropic?: AnthropicProviderSettings;
  /** Extra settings for the Bedrock provider (they win over the environment). */
  bedrock?: BedrockProviderSettings;
  /** Extra settings for the Vertex provider (they win over the environment). */
  vertex?: VertexProviderSettings;
}

export interface ProviderFromEnv {
  provider: ModelProvider;
  providerName: ProviderName;
  /** `UNFORGET_MODEL`, or the provider's default. */
  model: string;
  /** Why this provider was chosen, for logs ("UNFORGET_PROVIDER=bedrock", "ANTHROPIC_API_KEY is set", …). */
  reason: string;
}

const SETUP_HELP =
  "Set UNFORGET_PROVIDER to anthropic, bedrock or vertex and give that provider its credentials: " +
  "anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL alone for an Anthropic-compatible server); " +
  "bedrock needs AWS_REGION plus AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK, or AWS_PROFILE; " +
  "vertex needs GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS (or gcloud application-default credentials), GOOGLE_CLOUD_LOCATION optional. " +
  "UNFORGET_MODEL picks the model (defaults: anthropic claude-sonnet-4-6, bedrock us.anthropic.claude-sonnet-4-5-20250929-v1:0, vertex gemini-2.5-pro).";

function present(env: Record<string, string | undefined>, name: string): boolean {
  const value = env[name];
  return value !== undefined && value.trim() !== "";
}

/** The provider the credentials in `env` point to, with the reason, or undefined when none do. */
function detect(env: Record<string, string | undefined>): { name: ProviderName; reason: string } | undefined {
  for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"]) {
    if (present(env, name)) return { name: "anthropic", reason: `${name} is set` };
  }
  if (present(env, "AWS_BEARER_TOKEN_BEDROCK"))
    return { name: "bedrock", reason: "AWS_BEARER_TOKEN_BEDROCK is set" };
  if (present(env, "AWS_ACCESS_KEY_ID") && present(env, "AWS_SECRET_ACCESS_KEY")) {
    return { name: "bedrock", reason: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set" };
  }
  if (present(env, "AWS_PROFILE")) return { name: "bedrock", reason: "AWS_PROFILE is set" };
  if (present(env, "GOOGLE_CLOUD_PROJECT") && present(env, "GOOGLE_APPLICATION_CREDENTIALS")) {
    return { name: "vertex", reason: "GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS are set" };
  }
  return undefined;
}

/** What an explicitly chosen provider still lacks, as the sentence to show; undefined when nothing is missing. */
function missingFor(
  name: ProviderName,
  env: Record<string, string | undefined>,
  options: CreateProviderFromEnvOptions,
): string | undefined {
  if (name === "anthropic") {
    const settings = options.anthropic ?? {};
    const configured =
      settings.apiKey !== undefined ||
      settings.authToken !== undefined ||
      settings.baseURL !== undefined ||
      ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"].some((variable) =>
        present(env, variable),
      );
    return configured
      ? undefined
      : "UNFORGET_PROVIDER=anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or ANTHROPIC_BASE_URL for a compatible server).";
  }
  if (name === "bedrock") {
    // The Bedrock provider takes its region from its settings, AWS_REGION or AWS_DEFAULT_REGION only; a region
    // written in an AWS_PROFILE's config file is not consulted, so a profile alone would fail on the first call.
    const hasRegion =
      options.bedrock?.region !== undefined ||
      present(env, "AWS_REGION") ||
      present(env, "AWS_DEFAULT_REGION");
    return hasRegion
      ? undefined
      : "UNFORGET_PROVIDER=bedrock needs AWS_REGION (for example us-east-1), also when AWS_PROFILE is set.";
  }
  const hasProject =
    options.vertex?.project !== undefined ||
    present(env, "GOOGLE_CLOUD_PROJECT") ||
    present(env, "GCLOUD_PROJECT");
  return hasProject
    ? undefined
    : "UNFORGET_PROVIDER=vertex needs GOOGLE_CLOUD_PROJECT (and GOOGLE_APPLICATION_CREDENTIALS or gcloud application-default credentials).";
}

function build(
  name: ProviderName,
  env: Record<string, string | undefined>,
  options: CreateProviderFromEnvOptions,
): ModelProvider {
  switch (name) {
    case "anthropic": {
      const settings: AnthropicProviderSettings = {};
      if (present(env, "ANTHROPIC_API_KEY")) settings.apiKey = env.ANTHROPIC_API_KEY as string;
      else if (present(env, "ANTHROPIC_AUTH_TOKEN")) settings.authToken = env.ANTHROPIC_AUTH_TOKEN as string;
      if (present(env, "ANTHROPIC_BASE_URL")) settings.baseURL = env.ANTHROPIC_BASE_URL as string;
      // `env` also scopes the provider's own fallbacks (ANTHROPIC_CUSTOM_HEADERS) to the same variables.
      return createAnthropicProvider({ env, ...settings, ...options.anthropic });
    }
    case "bedrock": {
      const settings: BedrockProviderSettings = {};
      const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
      if (region) settings.region = region;
      if (present(env, "AWS_BEARER_TOKEN_BEDROCK")) settings.apiKey = env.AWS_BEARER_TOKEN_BEDROCK as string;
      if (present(env, "AWS_ACCESS_KEY_ID") && present(env, "AWS_SECRET_ACCESS_KEY")) {
        settings.credentials = {
          accessKeyId: env.AWS_ACCESS_KEY_ID as string,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY as string,
          ...(present(env, "AWS_SESSION_TOKEN") ? { sessionToken: env.AWS_SESSION_TOKEN as string } : {}),
        };
      }
      return createBedrockProvider({ ...settings, ...options.bedrock });
    }
    case "vertex":
      return createVertexProvider({ env, ...options.vertex });
  }
}

/**
 * Chooses the model provider and model from the environment, so a deployment switches provider by
 * configuration alone. `UNFORGET_PROVIDER` (anthropic | bedrock | vertex) wins; otherwise the first
 * credentials found decide (Anthropic, then AWS, then Google). Throws `ConfigurationError` saying exactly
 * what to set when nothing is configured. The provider itself still reads its settings lazily.
 */
export function createProviderFromEnv(options: CreateProviderFromEnvOptions = {}): ProviderFromEnv {
  const env = options.env ?? process.env;
  const requested = env.UNFORGET_PROVIDER?.trim().toLowerCase();
  let choice: { name: ProviderName; reason: string } | undefined;
  if (requested) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(requested)) {
      throw new ConfigurationError(
        `UNFORGET_PROVIDER is "${env.UNFORGET_PROVIDER}", which is not a provider. Set it to anthropic, bedrock or vertex.`,
        { setting: "UNFORGET_PROVIDER" },
      );
    }
    choice = { name: requested as ProviderName, reason: `UNFORGET_PROVIDER=${requested}` };
    const missing = missingFor(choice.name, env, options);
    if (missing) throw new ConfigurationError(missing, { setting: "UNFORGET_PROVIDER" });
  } else {
    choice = detect(env);
  }
  if (!choice) {
    throw new ConfigurationError(`No model provider is configured. ${SETUP_HELP}`, {
      setting: "UNFORGET_PROVIDER",
    });
  }
  const model = present(env, "UNFORGET_MODEL")
    ? (env.UNFORGET_MODEL as string).trim()
    : DEFAULT_MODELS[choice.name];
  return {
    provider: build(choice.name, env, options),
    providerName: choice.name,
    model,
    reason: choice.reason,
  };
}
