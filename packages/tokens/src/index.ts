export type { TokenCount, TokenCounter, TokenCountMethod } from "@unforget/core";
export type { MessageTokenBreakdown } from "./estimate-message-tokens.ts";
export {
  estimateImageTokens,
  estimateMessageBreakdown,
  estimateMessagesTokens,
  estimateMessageTokens,
} from "./estimate-message-tokens.ts";
export { estimateRequestTokens } from "./estimate-request-tokens.ts";
export { DEFAULT_ESTIMATOR_PROFILE, estimateTextTokens } from "./estimate-text-tokens.ts";
export type { EstimatorProfile } from "./estimator-coefficients.ts";
export { ESTIMATOR_COEFFICIENTS } from "./estimator-coefficients.ts";
export type { TextFeatureName } from "./text-features.ts";
export { collectTextFeatures, TEXT_FEATURE_NAMES } from "./text-features.ts";
export type { TokenEstimatorOptions } from "./token-estimator-options.ts";
export {
  DEFAULT_MEDIA_TOKENS,
  DEFAULT_MESSAGE_OVERHEAD_TOKENS,
  DEFAULT_PADDING,
} from "./token-estimator-options.ts";
