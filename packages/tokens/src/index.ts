export type { TokenCount, TokenCounter, TokenCountMethod } from "@unforget/core";
export type { CalibrationKey, Calibrator, CalibratorOptions } from "./calibrator.ts";
export { createCalibrator } from "./calibrator.ts";
export type {
  ContextPolicy,
  ContextPolicyOptions,
  ContextState,
  GaugeLevel,
} from "./context/context-policy.ts";
export { createContextPolicy } from "./context/context-policy.ts";
export type {
  AutoCompactThresholdSetting,
  ContextThresholdOptions,
  ContextThresholds,
  ModelOrLimits,
} from "./context/context-thresholds.ts";
export {
  AUTO_COMPACT_BUFFER_TOKENS,
  AUTO_COMPACT_PERCENT_ENV,
  AUTO_COMPACT_WINDOW_ENV,
  BLOCKING_BUFFER_TOKENS,
  getAutoCompactThreshold,
  getContextThresholds,
  getEffectiveContextWindow,
  getTokensLeftBeforeCompaction,
  MINIMUM_CONTEXT_WINDOW_TOKENS,
  SUMMARY_OUTPUT_RESERVE_TOKENS,
  WARNING_BUFFER_TOKENS,
} from "./context/context-thresholds.ts";
export { ContextWindowTooSmallError } from "./context/context-window-too-small-error.ts";
export type { MessageTokenBreakdown } from "./estimate-message-tokens.ts";
export {
  estimateImageTokens,
  estimateMessageBreakdown,
  estimateMessagesTokens,
  estimateMessageTokens,
  MAX_DOCUMENT_PAGES,
} from "./estimate-message-tokens.ts";
export { estimateRequestTokens } from "./estimate-request-tokens.ts";
export { DEFAULT_ESTIMATOR_PROFILE, estimateTextTokens } from "./estimate-text-tokens.ts";
export type { EstimatorProfile } from "./estimator-coefficients.ts";
export { ESTIMATOR_COEFFICIENTS } from "./estimator-coefficients.ts";
export type { FallbackCounterOptions } from "./fallback-counter.ts";
export {
  createFallbackCounter,
  createHeuristicCounter,
  DEFAULT_COUNT_CACHE_ENTRIES,
  DEFAULT_COUNT_TIMEOUT_MS,
} from "./fallback-counter.ts";
export { MAX_COUNTED_TOKENS } from "./finite-count.ts";
export type { ModelPricing, ResolvedModelPricing, UsageCost } from "./model-pricing.ts";
export {
  CACHE_READ_MULTIPLIER,
  CACHE_WRITE_1H_MULTIPLIER,
  CACHE_WRITE_5M_MULTIPLIER,
  DEFAULT_MODEL_PRICING,
  getModelPricing,
  resolvePricing,
  UNKNOWN_MODEL_PRICING,
  usageCost,
} from "./model-pricing.ts";
export { stripUncountableFields } from "./strip-uncountable-fields.ts";
export type { TextFeatureName } from "./text-features.ts";
export { collectTextFeatures, TEXT_FEATURE_NAMES } from "./text-features.ts";
export type { TokenCountSession } from "./token-count-session.ts";
export { createTokenCountSession } from "./token-count-session.ts";
export type {
  ContextTokenCount,
  CountableMessage,
  TokenCountWithEstimationOptions,
} from "./token-count-with-estimation.ts";
export {
  findUsageAnchor,
  measureContextTokens,
  tokenCountWithEstimation,
} from "./token-count-with-estimation.ts";
export type { TokenEstimatorOptions } from "./token-estimator-options.ts";
export {
  DEFAULT_MEDIA_TOKENS,
  DEFAULT_MESSAGE_OVERHEAD_TOKENS,
  DEFAULT_PADDING,
} from "./token-estimator-options.ts";
