import type { EnvironmentDetection, EnvironmentProblem } from "@unforget/provider-runtime";
import { nonBlank } from "@unforget/provider-runtime";
import { parseCustomHeaders } from "./anthropic-custom-headers.ts";

/** The model a deployment gets when it names none. */
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-6";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const CUSTOM_HEADERS_VARIABLE = "ANTHROPIC_CUSTOM_HEADERS";
/** Sent as the key when a non-Anthropic base URL (a local compatible server) needs none. */
const PLACEHOLDER_API_KEY = "unforget-no-key";

/** The settings that decide where and how the provider connects; explicit values win over the environment. */
export interface AnthropicEnvironmentSettings {
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
  headers?: Record<string, string>;
}

/** Where and how to reach the API, as read from the settings and the environment. */
export interface AnthropicConnection {
  baseURL: string;
  credentials: { apiKey: string } | { authToken: string };
  /** `ANTHROPIC_CUSTOM_HEADERS` merged under the explicit `headers`. */
  headers: Record<string, string>;
}

type Environment = Readonly<Record<string, string | undefined>>;

const HELP = "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL alone for a compatible server)";

/**
 * What the Anthropic provider finds in `env` and `settings`: the first of apiKey / ANTHROPIC_API_KEY,
 * authToken / ANTHROPIC_AUTH_TOKEN, baseURL / ANTHROPIC_BASE_URL decides. The real API needs a key or a
 * token; any other base URL (a compatible server) works without one.
 */
export async function detectAnthropicEnvironment(
  env: Environment = process.env,
  settings: AnthropicEnvironmentSettings = {},
): Promise<EnvironmentDetection> {
  const { reason, problem, connection } = readAnthropicEnvironment(env, settings);
  const baseURL = connection?.baseURL.replace(/\/+$/, "");
  return {
    reason,
    problem,
    help: HELP,
    ...(baseURL !== undefined && baseURL !== ANTHROPIC_DEFAULT_BASE_URL ? { endpoint: baseURL } : {}),
  };
}

/** The connection the provider uses, or the problem that stops it (the same rules `detect…` reports). */
export function readAnthropicEnvironment(
  env: Environment,
  settings: AnthropicEnvironmentSettings,
): { reason: string | undefined; problem: EnvironmentProblem | undefined; connection?: AnthropicConnection } {
  const reason = firstGiven(env, settings);
  const baseURL = settings.baseURL ?? nonBlank(env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_DEFAULT_BASE_URL;
  const authToken = settings.authToken ?? (settings.apiKey ? undefined : nonBlank(env.ANTHROPIC_AUTH_TOKEN));
  const apiKey = settings.apiKey ?? (authToken ? undefined : nonBlank(env.ANTHROPIC_API_KEY));
  let credentials: AnthropicConnection["credentials"];
  if (apiKey) credentials = { apiKey };
  else if (authToken) credentials = { authToken };
  else if (baseURL.replace(/\/+$/, "") !== ANTHROPIC_DEFAULT_BASE_URL)
    credentials = { apiKey: PLACEHOLDER_API_KEY };
  else {
    return {
      reason,
      problem: {
        message:
          `No Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass apiKey to createAnthropicProvider(). ${
            reason === undefined ? "" : `(${reason}, but the real API needs a key.)`
          }`.trim(),
        setting: "ANTHROPIC_API_KEY",
      },
    };
  }
  const headers = mergeHeaders(parseCustomHeaders(env[CUSTOM_HEADERS_VARIABLE]), settings.headers);
  return { reason, problem: undefined, connection: { baseURL, credentials, headers } };
}

function firstGiven(env: Environment, settings: AnthropicEnvironmentSettings): string | undefined {
  if (settings.apiKey !== undefined) return "apiKey is given";
  if (settings.authToken !== undefined) return "authToken is given";
  if (settings.baseURL !== undefined) return "baseURL is given";
  for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"]) {
    if (nonBlank(env[name]) !== undefined) return `${name} is set`;
  }
  return undefined;
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
