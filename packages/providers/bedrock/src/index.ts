export type { BedrockCredentials, BedrockEnvironmentSettings } from "./bedrock-environment.ts";
export { BEDROCK_DEFAULT_MODEL, detectBedrockEnvironment } from "./bedrock-environment.ts";
export { BEDROCK_PROVIDER_ID } from "./bedrock-error.ts";
export type {
  BedrockProvider,
  BedrockProviderOptions,
  BedrockProviderSettings,
} from "./bedrock-provider.ts";
export { createBedrockProvider } from "./bedrock-provider.ts";
