import { ConfigurationError, type ModelProvider } from "@unforget/core";
import { checkSettingNames } from "@unforget/provider-runtime";
import { ProviderPackageMissingError } from "./provider-package-missing-error.ts";
import {
  loadProviderPackage,
  PROVIDER_NAMES,
  PROVIDER_PACKAGES,
  type ProviderName,
  type ProviderPackage,
  type ProviderSettingsByName,
} from "./provider-packages.ts";

export interface CreateProviderFromEnvOptions extends Partial<ProviderSettingsByName> {
  /** Where to read the variables. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

export interface ProviderFromEnv {
  provider: ModelProvider;
  providerName: ProviderName;
  /** `UNFORGET_MODEL`, or the provider's default. */
  model: string;
  /** Why this provider was chosen, for logs ("UNFORGET_PROVIDER=bedrock", "ANTHROPIC_API_KEY is set", …). */
  reason: string;
  /** Where requests go when the settings or the environment point elsewhere than the provider's own service. */
  endpoint?: string;
}

interface Choice<Name extends ProviderName = ProviderName> {
  name: Name;
  package: ProviderPackage<Name>;
  reason: string;
  endpoint: string | undefined;
}

/**
 * Chooses the model provider and model from the environment, so a deployment switches provider by
 * configuration alone. `UNFORGET_PROVIDER` (anthropic | bedrock | vertex) wins; otherwise the first installed
 * provider whose settings are present decides (Anthropic, then Bedrock, then Vertex). Either way the chosen
 * provider's own rules check it, so a choice that could not serve a request is a `ConfigurationError` here,
 * not on the first call. Provider packages are optional peers: their environment rules are loaded when
 * considered, their SDK only when chosen. An option this function does not read (or, for the chosen provider, a
 * setting its factory does not read) is a `ConfigurationError` naming the one probably meant.
 */
export async function createProviderFromEnv(
  options: CreateProviderFromEnvOptions = {},
): Promise<ProviderFromEnv> {
  checkSettingNames("createProviderFromEnv()", options, ["env", ...PROVIDER_NAMES]);
  const env = options.env ?? process.env;
  const requested = env.UNFORGET_PROVIDER?.trim().toLowerCase();
  const choice = requested
    ? await explicitChoice(requested, env, options)
    : await detectedChoice(env, options);
  const model = env.UNFORGET_MODEL?.trim() || choice.package.defaultModel;
  const settings = { env, ...options[choice.name] } as ProviderSettingsByName[typeof choice.name];
  const create = await choice.package.factory();
  return {
    provider: create(settings),
    providerName: choice.name,
    model,
    reason: choice.reason,
    ...(choice.endpoint !== undefined ? { endpoint: choice.endpoint } : {}),
  };
}

async function explicitChoice(
  requested: string,
  env: Record<string, string | undefined>,
  options: CreateProviderFromEnvOptions,
): Promise<Choice> {
  if (!(PROVIDER_NAMES as readonly string[]).includes(requested)) {
    throw new ConfigurationError(
      `UNFORGET_PROVIDER is "${env.UNFORGET_PROVIDER}", which is not a provider. Set it to anthropic, bedrock or vertex.`,
      { setting: "UNFORGET_PROVIDER" },
    );
  }
  const name = requested as ProviderName;
  const loaded = await loadProviderPackage(name);
  if (loaded === undefined) {
    const packageName = PROVIDER_PACKAGES[name];
    throw new ProviderPackageMissingError(
      `UNFORGET_PROVIDER=${name} needs the package ${packageName}, which is not installed: npm install ${packageName}`,
      { packageName },
    );
  }
  const { problem, endpoint } = await loaded.detect(env, options[name] ?? {});
  if (problem !== undefined) {
    throw new ConfigurationError(`UNFORGET_PROVIDER=${name}: ${problem.message}`, {
      setting: problem.setting,
    });
  }
  return { name, package: loaded, reason: `UNFORGET_PROVIDER=${name}`, endpoint };
}

async function detectedChoice(
  env: Record<string, string | undefined>,
  options: CreateProviderFromEnvOptions,
): Promise<Choice> {
  const needs: string[] = [];
  for (const name of PROVIDER_NAMES) {
    const loaded = await loadProviderPackage(name);
    if (loaded === undefined) {
      needs.push(`  ${name}: not installed (npm install ${PROVIDER_PACKAGES[name]})`);
      continue;
    }
    const { reason, problem, help, endpoint } = await loaded.detect(env, options[name] ?? {});
    if (reason === undefined) {
      needs.push(`  ${name}: ${help}`);
      continue;
    }
    // Something points to this provider: it is the choice, and what it lacks is the answer.
    if (problem !== undefined) throw new ConfigurationError(problem.message, { setting: problem.setting });
    return { name, package: loaded, reason, endpoint };
  }
  throw new ConfigurationError(
    [
      "No model provider is configured. Give one of these what it needs (UNFORGET_PROVIDER picks one explicitly):",
      ...needs,
      "UNFORGET_MODEL picks the model (each provider has a default).",
    ].join("\n"),
    { setting: "UNFORGET_PROVIDER" },
  );
}
