export type {
  CreateProviderFromEnvOptions,
  ProviderFromEnv,
  ProviderName,
} from "./create-provider-from-env.ts";
export { createProviderFromEnv, DEFAULT_MODELS, PROVIDER_NAMES } from "./create-provider-from-env.ts";
