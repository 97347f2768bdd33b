export { connectOnce } from "./connect-once.ts";
export { describeError } from "./describe-error.ts";
export type { EnvironmentDetection, EnvironmentProblem } from "./environment-detection.ts";
export { isSet } from "./environment-detection.ts";
export { heuristicTokenCount } from "./heuristic-token-count.ts";
export type { LearnedModelLimits } from "./learned-model-limits.ts";
export { createLearnedModelLimits } from "./learned-model-limits.ts";
export { createModelStream, ModelResponseAccumulator } from "./model-stream.ts";
export type { PromptTooLongMatch } from "./prompt-too-long.ts";
export { parsePromptTooLongMessage } from "./prompt-too-long.ts";
export type { AttemptContext, ErrorContext } from "./provider-attempt.ts";
export type { ProviderDefinition, ProviderRuntime } from "./provider-runtime.ts";
export { createProviderRuntime } from "./provider-runtime.ts";
export type { ProviderRuntimeSettings } from "./provider-settings.ts";
export type { RetryAttemptInfo, RetryDecision, RetryOptions } from "./retry.ts";
export {
  abortableDelay,
  computeRetryDelay,
  DEFAULT_MAX_RETRIES,
  parseRetryAfter,
  throwIfAborted,
  withRetries,
} from "./retry.ts";
