export type { CacheBreak, CacheBreakDetector } from "./cache-break-detector.ts";
export {
  CACHE_BREAK_MIN_FRACTION,
  CACHE_BREAK_MIN_TOKENS,
  createCacheBreakDetector,
} from "./cache-break-detector.ts";
export type {
  CachedMicrocompact,
  CachedMicrocompactOptions,
  CachedMicrocompactPlan,
  CacheEdit,
} from "./cached-microcompact.ts";
export { createCachedMicrocompact, DEFAULT_CACHE_EDIT_TRIGGER } from "./cached-microcompact.ts";
export type { CircuitBreaker } from "./circuit-breaker.ts";
export { createCircuitBreaker, DEFAULT_BREAKER_THRESHOLD } from "./circuit-breaker.ts";
export type { CollapseOptions } from "./collapse-context.ts";
export { collapseContext, DEFAULT_COLLAPSE_PROTECT_ROUNDS } from "./collapse-context.ts";
export type {
  CompactConversationOptions,
  CompactionOutcome,
  ContinuationStyle,
} from "./compact-conversation.ts";
export {
  compactConversation,
  MAX_PTL_RETRIES,
  prepareForSummary,
  summaryMessageText,
} from "./compact-conversation.ts";
export type { CompactionFailureReason } from "./compact-error.ts";
export { CompactionDisabledError, CompactionFailedError } from "./compact-error.ts";
export type { CompactPromptOptions } from "./compact-prompt.ts";
export { buildCompactPrompt } from "./compact-prompt.ts";
export type { CompactableTools } from "./compactable-tools.ts";
export { compactablePredicate, DEFAULT_COMPACTABLE_TOOLS } from "./compactable-tools.ts";
export type { ContextEvent, ContextEventListener, LayerName, LayerReport } from "./context-events.ts";
export { LAYER_NAMES } from "./context-events.ts";
export type { CompactOptions, ContextManager, ContextStatus, PrepareResult } from "./context-manager.ts";
export { createContextManager } from "./context-manager.ts";
export type {
  ContextManagerConfig,
  ContextManagerOptions,
  PrepareOptions,
  ThresholdSetting,
} from "./context-manager-options.ts";
export type { ContextTool } from "./context-tools.ts";
export { createCompactTool, createSnipTool } from "./context-tools.ts";
export type { TranscriptSink } from "./context-view.ts";
export type { ExtractiveSummarizerOptions } from "./extractive-summarizer.ts";
export { createExtractiveSummarizer } from "./extractive-summarizer.ts";
export type { HeadTruncation } from "./head-truncation.ts";
export { truncateHeadForRetry } from "./head-truncation.ts";
export type { KeepWindowOptions } from "./keep-window.ts";
export { adjustForPairs, calculateKeepStart } from "./keep-window.ts";
export type { LayerResult, LayerTimeOptions } from "./layer-result.ts";
export type { MicrocompactOptions } from "./microcompact.ts";
export { CLEARED_RESULT_TEXT, microcompact } from "./microcompact.ts";
export { truncateMiddle } from "./middle-out.ts";
export type { ModelSummarizerOptions } from "./model-summarizer.ts";
export { createModelSummarizer } from "./model-summarizer.ts";
export type { NativeContextOptions, ServerCompaction } from "./native-context.ts";
export {
  billedInputTokens,
  buildContextManagement,
  getServerCompaction,
  onDemandCompactionOptions,
  portableMessages,
  supportsNativeContext,
} from "./native-context.ts";
export type { ObservationMaskingOptions } from "./observation-masking.ts";
export { DEFAULT_MASK_KEEP_LAST, maskObservations } from "./observation-masking.ts";
export type {
  AttachmentProvider,
  RecentFilesOptions,
  RehydrationContext,
  TodosOptions,
} from "./rehydration.ts";
export {
  createCallbackProvider,
  createInstructionsProvider,
  createRecentFilesProvider,
  createSkillsProvider,
  createTodosProvider,
} from "./rehydration.ts";
export type { ReplayCall, ReplayOptions, ReplayResult, ReplayStats } from "./replay-conversation.ts";
export { CACHED_INPUT_WEIGHT, replayConversation } from "./replay-conversation.ts";
export type { SessionMemoryCompactOptions } from "./session-memory-compact.ts";
export { sessionMemoryCompact } from "./session-memory-compact.ts";
export type { SnipOptions } from "./snip-compact.ts";
export { snipCompact } from "./snip-compact.ts";
export type {
  CacheSafeParameters,
  SummarizeRequest,
  Summarizer,
  SummaryResult,
  SummaryScope,
} from "./summarizer.ts";
export { formatSummaryReply, missingSections, SUMMARY_SECTIONS } from "./summary-format.ts";
export type { ToolResultBudgetOptions } from "./tool-result-budget.ts";
export { applyToolResultBudget } from "./tool-result-budget.ts";
