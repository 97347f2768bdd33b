export type {
  CreateProviderFromEnvOptions,
  ProviderFromEnv,
} from "./create-provider-from-env.ts";
export { createProviderFromEnv } from "./create-provider-from-env.ts";
export { ProviderPackageMissingError } from "./provider-package-missing-error.ts";
export type { ProviderName, ProviderSettingsByName } from "./provider-packages.ts";
export { PROVIDER_NAMES, PROVIDER_PACKAGES } from "./provider-packages.ts";
