/**
 * Bedrock-specific request fields, passed as `providerOptions.bedrock` on a `ModelRequest`; other providers
 * ignore them.
 */
export interface BedrockRequestOptions {
  /** Merged into Converse `additionalModelRequestFields` (model-native fields, e.g. Claude's `top_k`). */
  additionalModelRequestFields?: Record<string, unknown>;
  /** Claude beta flags, sent as `additionalModelRequestFields.anthropic_beta`. */
  anthropicBeta?: string[];
  /** Converse `requestMetadata` (string key/value pairs for invocation logs). */
  requestMetadata?: Record<string, string>;
}
