export type { BedrockCredentials, BedrockProvider, BedrockProviderSettings } from "./bedrock-provider.ts";
export { createBedrockProvider } from "./bedrock-provider.ts";
export type { BedrockRequestOptions } from "./converse-request.ts";
export { countTokensModelId } from "./count-tokens-model-id.ts";
