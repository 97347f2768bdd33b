import type { EnvironmentDetection, EnvironmentProblem } from "@unforget/provider-runtime";
import { nonBlank } from "@unforget/provider-runtime";

/**
 * The model a deployment gets when it names none: Claude Sonnet 4.6 through the US cross-region inference
 * profile (from a region outside the US, name the `eu.`, `apac.` or `global.` profile in UNFORGET_MODEL).
 */
export const BEDROCK_DEFAULT_MODEL = "us.anthropic.claude-sonnet-4-6";

/** Static AWS credentials (an access key pair, with a session token for temporary credentials). */
export interface BedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When temporary credentials expire; a provider function is called again before then. */
  expiration?: Date;
}

/** The settings that decide where and how the provider connects; explicit values win over the environment. */
export interface BedrockEnvironmentSettings {
  region?: string;
  /** An endpoint of one's own; else `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` or `AWS_ENDPOINT_URL`, as the SDK reads them. */
  baseURL?: string;
  credentials?: BedrockCredentials | (() => Promise<BedrockCredentials>);
  apiKey?: string;
  profile?: string;
}

/** How the SDK client authenticates, as read from the settings and the environment. */
export type BedrockAuthentication =
  /** A Bedrock API key, sent as `Authorization: Bearer`. */
  | { kind: "api-key"; apiKey: string }
  /** SigV4 with credentials given or found as variables. */
  | { kind: "credentials"; credentials: BedrockCredentials | (() => Promise<BedrockCredentials>) }
  /** SigV4 with the SDK's chain for a named profile of the shared files (keys, SSO, roles, processes). */
  | { kind: "profile"; profile: string }
  /** SigV4 with the SDK's default chain (default profile, container and instance roles, …). */
  | { kind: "default-chain" };

/** Where and how to reach Bedrock, as read from the settings and the environment. */
export interface BedrockConnection {
  region: string;
  authentication: BedrockAuthentication;
  /** The shared config and credentials files (`AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE`), when set. */
  sharedFiles: { configFilepath?: string; filepath?: string };
}

type Environment = Readonly<Record<string, string | undefined>>;

const HELP =
  "AWS_REGION plus AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK or AWS_PROFILE";

/**
 * What the Bedrock provider finds in `env` and `settings`. A Bedrock API key, an access key pair or a named
 * profile points to Bedrock; every way needs a region, from `region`, `AWS_REGION`, `AWS_DEFAULT_REGION` or
 * the profile's `region` in the shared config file (read with the AWS SDK's own loader).
 */
export async function detectBedrockEnvironment(
  env: Environment = process.env,
  settings: BedrockEnvironmentSettings = {},
): Promise<EnvironmentDetection> {
  const { reason, problem } = await readBedrockEnvironment(env, settings);
  const endpoint =
    nonBlank(settings.baseURL) ??
    nonBlank(env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME) ??
    nonBlank(env.AWS_ENDPOINT_URL);
  return { reason, problem, help: HELP, ...(endpoint !== undefined ? { endpoint } : {}) };
}

/** The connection the provider uses, or the problem that stops it (the same rules `detect…` reports). */
export async function readBedrockEnvironment(
  env: Environment,
  settings: BedrockEnvironmentSettings,
): Promise<{
  reason: string | undefined;
  problem: EnvironmentProblem | undefined;
  connection?: BedrockConnection;
}> {
  const { authentication, reason } = authenticationOf(env, settings);
  const sharedFiles = {
    ...(nonBlank(env.AWS_CONFIG_FILE) !== undefined ? { configFilepath: env.AWS_CONFIG_FILE as string } : {}),
    ...(nonBlank(env.AWS_SHARED_CREDENTIALS_FILE) !== undefined
      ? { filepath: env.AWS_SHARED_CREDENTIALS_FILE as string }
      : {}),
  };
  const profile = authentication.kind === "profile" ? authentication.profile : "default";
  const region =
    nonBlank(settings.region) ??
    nonBlank(env.AWS_REGION) ??
    nonBlank(env.AWS_DEFAULT_REGION) ??
    (await profileRegion(profile, sharedFiles));
  if (region === undefined) {
    const found = reason === undefined ? "" : ` (${reason}, but that gives no region)`;
    return {
      reason,
      problem: {
        message: `No AWS region for Bedrock${found}: pass \`region\` to createBedrockProvider, set AWS_REGION (e.g. us-east-1), or give the ${profile === "default" ? "default profile" : `profile "${profile}"`} a region in the AWS config file.`,
        setting: "AWS_REGION",
      },
    };
  }
  return { reason, problem: undefined, connection: { region, authentication, sharedFiles } };
}

function authenticationOf(
  env: Environment,
  settings: BedrockEnvironmentSettings,
): { authentication: BedrockAuthentication; reason: string | undefined } {
  if (settings.apiKey !== undefined)
    return { authentication: { kind: "api-key", apiKey: settings.apiKey }, reason: "apiKey is given" };
  if (settings.credentials !== undefined) {
    return {
      authentication: { kind: "credentials", credentials: settings.credentials },
      reason: "credentials are given",
    };
  }
  if (nonBlank(env.AWS_BEARER_TOKEN_BEDROCK) !== undefined) {
    return {
      authentication: { kind: "api-key", apiKey: env.AWS_BEARER_TOKEN_BEDROCK as string },
      reason: "AWS_BEARER_TOKEN_BEDROCK is set",
    };
  }
  if (nonBlank(env.AWS_ACCESS_KEY_ID) !== undefined && nonBlank(env.AWS_SECRET_ACCESS_KEY) !== undefined) {
    const credentials: BedrockCredentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID as string,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY as string,
      ...(nonBlank(env.AWS_SESSION_TOKEN) !== undefined
        ? { sessionToken: env.AWS_SESSION_TOKEN as string }
        : {}),
    };
    return {
      authentication: { kind: "credentials", credentials },
      reason: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set",
    };
  }
  const profile = nonBlank(settings.profile) ?? nonBlank(env.AWS_PROFILE);
  if (profile !== undefined) {
    return {
      authentication: { kind: "profile", profile },
      reason: settings.profile === undefined ? `AWS_PROFILE is set (${profile})` : "profile is given",
    };
  }
  return { authentication: { kind: "default-chain" }, reason: undefined };
}

/** The `region` of a profile in the shared config (or credentials) file, read the way the AWS SDK reads it. */
async function profileRegion(
  profile: string,
  sharedFiles: BedrockConnection["sharedFiles"],
): Promise<string | undefined> {
  // The AWS SDK's config loader, loaded only when a region is looked for in the files.
  const { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } = await import(
    "@smithy/core/config"
  );
  const fromFiles = loadConfig<string | undefined>(
    {
      // Variables are read by the caller from its own `env`; only the files are consulted here.
      environmentVariableSelector: () => undefined,
      configFileSelector: NODE_REGION_CONFIG_OPTIONS.configFileSelector,
      // Unlike the SDK's default, no instance-metadata lookup: detection must not touch the network.
      default: () => undefined,
    },
    { ...NODE_REGION_CONFIG_FILE_OPTIONS, ...sharedFiles, profile, ignoreCache: true },
  );
  try {
    return nonBlank(await fromFiles());
  } catch {
    return undefined;
  }
}
