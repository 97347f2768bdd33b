import { ConfigurationError, type ModelProvider } from "@unforget/core";
import type { AnthropicProviderSettings } from "@unforget/provider-anthropic";
import type { BedrockProviderSettings } from "@unforget/provider-bedrock";
import type { VertexProviderSettings } from "@unforget/provider-vertex";

export const PROVIDER_NAMES = ["anthropic", "bedrock", "vertex"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The package of each provider; an optional peer, loaded only when that provider is considered. */
export const PROVIDER_PACKAGES: Readonly<Record<ProviderName, string>> = Object.freeze({
  anthropic: "@unforget/provider-anthropic",
  bedrock: "@unforget/provider-bedrock",
  vertex: "@unforget/provider-vertex",
});

/** Settings of each provider's factory, by provider name. */
export interface ProviderSettingsByName {
  anthropic: AnthropicProviderSettings;
  bedrock: BedrockProviderSettings;
  vertex: VertexProviderSettings;
}

/** What this package needs from a provider package: its environment rules, its default model, its factory. */
export interface ProviderPackage<Name extends ProviderName> {
  detect(
    env: Record<string, string | undefined>,
    settings: ProviderSettingsByName[Name],
  ): Promise<{
    reason: string | undefined;
    problem: { message: string; setting: string } | undefined;
    help: string;
    endpoint?: string;
  }>;
  defaultModel: string;
  /** Loads the package's root, with its SDK: called for the chosen provider only. */
  factory(): Promise<(settings: ProviderSettingsByName[Name]) => ModelProvider>;
}

/**
 * Loads a provider package's environment rules (its `/environment` entry, which loads no SDK), or returns
 * undefined when the package is not installed. The imports name the package literally, so bundlers and type
 * checkers see them; any other failure (a broken install, a missing SDK) is a `ConfigurationError` saying so.
 */
export async function loadProviderPackage<Name extends ProviderName>(
  name: Name,
): Promise<ProviderPackage<Name> | undefined> {
  try {
    return (await importPackage(name)) as ProviderPackage<Name>;
  } catch (error) {
    if (isMissing(error, PROVIDER_PACKAGES[name])) return undefined;
    throw brokenInstall(name, error);
  }
}

function brokenInstall(name: ProviderName, error: unknown): ConfigurationError {
  return new ConfigurationError(
    `${PROVIDER_PACKAGES[name]} is installed but could not be loaded (${error instanceof Error ? error.message : String(error)}). Reinstall it with its dependencies.`,
    { setting: "UNFORGET_PROVIDER", cause: error },
  );
}

/** The factory of a package whose environment entry loaded; a failure here is a broken install. */
function factoryOf<Factory>(name: ProviderName, load: () => Promise<Factory>): () => Promise<Factory> {
  return () =>
    load().catch((error: unknown) => {
      throw brokenInstall(name, error);
    });
}

async function importPackage(name: ProviderName): Promise<ProviderPackage<ProviderName>> {
  switch (name) {
    case "anthropic": {
      const module = await import("@unforget/provider-anthropic/environment");
      return {
        detect: module.detectAnthropicEnvironment,
        defaultModel: module.ANTHROPIC_DEFAULT_MODEL,
        factory: factoryOf(
          name,
          async () => (await import("@unforget/provider-anthropic")).createAnthropicProvider,
        ),
      } as ProviderPackage<ProviderName>;
    }
    case "bedrock": {
      const module = await import("@unforget/provider-bedrock/environment");
      return {
        detect: module.detectBedrockEnvironment,
        defaultModel: module.BEDROCK_DEFAULT_MODEL,
        factory: factoryOf(
          name,
          async () => (await import("@unforget/provider-bedrock")).createBedrockProvider,
        ),
      } as ProviderPackage<ProviderName>;
    }
    case "vertex": {
      const module = await import("@unforget/provider-vertex/environment");
      return {
        detect: module.detectVertexEnvironment,
        defaultModel: module.VERTEX_DEFAULT_MODEL,
        factory: factoryOf(
          name,
          async () => (await import("@unforget/provider-vertex")).createVertexProvider,
        ),
      } as ProviderPackage<ProviderName>;
    }
  }
}

/** True when `error` says that `packageName` itself (not one of its dependencies) cannot be found. */
function isMissing(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    typeof message === "string" &&
    message.includes(`'${packageName}'`)
  );
}
