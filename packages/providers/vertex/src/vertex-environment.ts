import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ConfigurationError } from "@unforget/core";
import type { EnvironmentDetection, EnvironmentProblem } from "@unforget/provider-runtime";
import { nonBlank } from "@unforget/provider-runtime";

/** The model a deployment gets when it names none. */
export const VERTEX_DEFAULT_MODEL = "gemini-2.5-pro";

/** Supplies an OAuth access token; called before every request (cache it yourself if it is costly). */
export type VertexAccessTokenSource = string | (() => string | Promise<string>);

/** The settings that decide where and how the provider connects; explicit values win over the environment. */
export interface VertexEnvironmentSettings {
  project?: string;
  location?: string;
  baseURL?: string;
  accessToken?: VertexAccessTokenSource;
  googleAuthOptions?: Record<string, unknown>;
}

/** Where to reach Vertex AI, as read from the settings and the environment. */
export interface VertexConnection {
  project: string;
  location: string;
  /** `host[:port]` for the SDK (which always speaks https), when not the regional default. */
  apiEndpoint: string | undefined;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Variables Google's own runtimes set: there the metadata server supplies credentials. */
const GOOGLE_RUNTIME_VARIABLES = ["K_SERVICE", "CLOUD_RUN_JOB", "GAE_SERVICE", "FUNCTION_TARGET"];

const HELP =
  "GOOGLE_CLOUD_PROJECT plus GOOGLE_APPLICATION_CREDENTIALS or gcloud application-default credentials";

/**
 * What the Vertex provider finds in `env` and `settings`. It needs a project (`project`,
 * `GOOGLE_CLOUD_PROJECT`, `GCLOUD_PROJECT`) and Google credentials: `accessToken` / `googleAuthOptions`, a
 * key file named by `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's application-default credentials file, or a
 * Google runtime whose metadata server serves them (Cloud Run, App Engine, Cloud Functions; elsewhere set
 * `METADATA_SERVER_DETECTION=assume-present`, as google-auth-library reads it).
 */
export async function detectVertexEnvironment(
  env: Environment = process.env,
  settings: VertexEnvironmentSettings = {},
): Promise<EnvironmentDetection> {
  const project = projectOf(env, settings);
  const credentials = credentialsOf(env, settings);
  const reason = project?.reason ?? credentials.reason;
  let problem: EnvironmentProblem | undefined;
  if (project === undefined) {
    problem = {
      message: `No Google Cloud project for Vertex AI${reason === undefined ? "" : ` (${reason})`}: pass \`project\` to createVertexProvider or set GOOGLE_CLOUD_PROJECT.`,
      setting: "GOOGLE_CLOUD_PROJECT",
    };
  } else if (credentials.problem !== undefined) {
    problem = credentials.problem;
  } else if (credentials.reason === undefined) {
    problem = {
      message: `${project.reason}, but no Google credentials were found for Vertex AI: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, run \`gcloud auth application-default login\`, or pass accessToken / googleAuthOptions (on a Google Cloud VM or GKE, set METADATA_SERVER_DETECTION=assume-present).`,
      setting: "GOOGLE_APPLICATION_CREDENTIALS",
    };
  }
  const endpoint = nonBlank(settings.baseURL) ?? nonBlank(env.GOOGLE_VERTEX_API_ENDPOINT);
  return { reason, problem, help: HELP, ...(endpoint !== undefined ? { endpoint } : {}) };
}

/** Project, location and endpoint from the settings and `env`; throws `ConfigurationError` without a project. */
export function readVertexConnection(
  env: Environment,
  settings: VertexEnvironmentSettings,
): VertexConnection {
  const project = projectOf(env, settings);
  if (project === undefined) {
    throw new ConfigurationError(
      "No Google Cloud project for Vertex AI: pass `project` to createVertexProvider or set GOOGLE_CLOUD_PROJECT.",
      { setting: "project" },
    );
  }
  const location =
    settings.location ??
    nonBlank(env.GOOGLE_CLOUD_LOCATION) ??
    nonBlank(env.GOOGLE_CLOUD_REGION) ??
    nonBlank(env.CLOUD_ML_REGION) ??
    "us-central1";
  let apiEndpoint = settings.baseURL ?? nonBlank(env.GOOGLE_VERTEX_API_ENDPOINT);
  if (apiEndpoint !== undefined) {
    if (/^http:\/\//i.test(apiEndpoint)) {
      throw new ConfigurationError(
        `baseURL "${apiEndpoint}" uses http://, but @google-cloud/vertexai always connects with https://. ` +
          "Pass an https:// URL or host:port (for a local fake, trust its CA with NODE_EXTRA_CA_CERTS).",
        { setting: "baseURL" },
      );
    }
    apiEndpoint = apiEndpoint.replace(/^https:\/\//i, "").replace(/\/+$/, "");
  } else if (location === "global") {
    // The SDK would build "global-aiplatform.googleapis.com", which does not exist.
    apiEndpoint = "aiplatform.googleapis.com";
  }
  return { project: project.value, location, apiEndpoint };
}

function projectOf(
  env: Environment,
  settings: VertexEnvironmentSettings,
): { value: string; reason: string } | undefined {
  if (settings.project !== undefined && settings.project.trim() !== "") {
    return { value: settings.project, reason: "project is given" };
  }
  for (const name of ["GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"]) {
    if (nonBlank(env[name]) !== undefined)
      return { value: (env[name] as string).trim(), reason: `${name} is set` };
  }
  return undefined;
}

/** Where google-auth-library will find credentials, or what is wrong with the ones named. */
function credentialsOf(
  env: Environment,
  settings: VertexEnvironmentSettings,
): { reason: string | undefined; problem?: EnvironmentProblem } {
  if (settings.accessToken !== undefined) return { reason: "accessToken is given" };
  if (settings.googleAuthOptions !== undefined) return { reason: "googleAuthOptions are given" };
  if (nonBlank(env.GOOGLE_APPLICATION_CREDENTIALS) !== undefined) {
    const file = (env.GOOGLE_APPLICATION_CREDENTIALS as string).trim();
    if (!existsSync(file)) {
      return {
        reason: "GOOGLE_APPLICATION_CREDENTIALS is set",
        problem: {
          message: `GOOGLE_APPLICATION_CREDENTIALS names ${file}, which does not exist: point it at a service-account key file.`,
          setting: "GOOGLE_APPLICATION_CREDENTIALS",
        },
      };
    }
    return { reason: "GOOGLE_APPLICATION_CREDENTIALS is set" };
  }
  if (existsSync(applicationDefaultCredentialsFile(env)))
    return { reason: "gcloud application-default credentials exist" };
  const runtime = GOOGLE_RUNTIME_VARIABLES.find((name) => nonBlank(env[name]) !== undefined);
  if (runtime !== undefined) return { reason: `${runtime} is set (a Google Cloud runtime)` };
  if (env.METADATA_SERVER_DETECTION?.trim() === "assume-present") {
    return { reason: "METADATA_SERVER_DETECTION=assume-present" };
  }
  return { reason: undefined };
}

/** gcloud's well-known credentials file, where google-auth-library looks for it. */
function applicationDefaultCredentialsFile(env: Environment): string {
  const configDirectory =
    nonBlank(env.CLOUDSDK_CONFIG) ??
    (process.platform === "win32"
      ? join(env.APPDATA ?? join(homedir(), "AppData", "Roaming"), "gcloud")
      : join(env.HOME ?? homedir(), ".config", "gcloud"));
  return join(configDirectory, "application_default_credentials.json");
}
