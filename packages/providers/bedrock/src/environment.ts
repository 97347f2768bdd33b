// `@unforget/provider-bedrock/environment`: the environment rules and the default model without the SDK, so that choosing
// a provider (`createProviderFromEnv`) loads no provider's SDK but the chosen one's (docs/decisions/0034).
export type { BedrockCredentials, BedrockEnvironmentSettings } from "./bedrock-environment.ts";
export { BEDROCK_DEFAULT_MODEL, detectBedrockEnvironment } from "./bedrock-environment.ts";
