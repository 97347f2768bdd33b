export type { BedrockCredentials, BedrockProvider, BedrockProviderSettings } from "./bedrock-provider.ts";
export { createBedrockProvider } from "./bedrock-provider.ts";
export type { BedrockRequestOptions } from "./bedrock-request-options.ts";
export { countTokensModelId } from "./count-tokens-model-id.ts";
