export type { CacheBreak, CacheBreakDetector } from "./cache-break-detector.ts";
export { createCacheBreakDetector } from "./cache-break-detector.ts";
export type { CarriedUserMessage } from "./carried-user-messages.ts";
export type { CircuitBreaker, CircuitBreakerOptions } from "./circuit-breaker.ts";
export { createCircuitBreaker } from "./circuit-breaker.ts";
export type { CollapseLayerOptions, CollapseOptions } from "./collapse-context.ts";
export { collapseContext, createCollapseLayer } from "./collapse-context.ts";
export type {
  CompactConversationOptions,
  CompactionOutcome,
  CompactRange,
  ContinuationStyle,
  SummaryLayerOptions,
} from "./compact-conversation.ts";
export {
  compactConversation,
  createSummaryLayer,
  prepareForSummary,
  summaryMessageText,
} from "./compact-conversation.ts";
export type { CompactionFailureReason } from "./compact-error.ts";
export { CompactionDisabledError, CompactionFailedError, ContextOverflowError } from "./compact-error.ts";
export type { CompactPromptOptions } from "./compact-prompt.ts";
export { buildCompactPrompt } from "./compact-prompt.ts";
export type { CompactableTools, ResultRetentionSetting } from "./compactable-tools.ts";
export { compactablePredicate, DEFAULT_COMPACTABLE_TOOLS, firstRetention } from "./compactable-tools.ts";
export type {
  CallPlan,
  CompactionPolicy,
  FixedLevelPolicyOptions,
  PolicyInput,
} from "./compaction-policy.ts";
export { createFixedLevelPolicy } from "./compaction-policy.ts";
export type {
  ContextEvent,
  ContextEventListener,
  DeclinedCompaction,
  LayerReport,
  SummaryFallback,
} from "./context-events.ts";
export type { CompactOptions, ContextManager, ContextStatus, PrepareResult } from "./context-manager.ts";
export { createContextManager } from "./context-manager.ts";
export type {
  ContextManagerConfig,
  ContextManagerOptions,
  PrepareOptions,
  ThresholdSetting,
} from "./context-manager-options.ts";
export { createCompactTool, createContextStatusTool, createSnipTool } from "./context-tools.ts";
export type { TranscriptSink } from "./context-view.ts";
export { createDefaultLayers } from "./default-ladder.ts";
export type { ExtractiveSummarizerOptions } from "./extractive-summarizer.ts";
export { createExtractiveSummarizer } from "./extractive-summarizer.ts";
export type {
  HostBreakpoints,
  HostCodec,
  HostCodecContext,
  HostConversation,
  HostConversationListener,
  HostConversationOptions,
  HostEvent,
  HostPrepared,
} from "./host-conversation.ts";
export { createHostConversation } from "./host-conversation.ts";
export type { KeepWindowOptions } from "./keep-window.ts";
export { adjustForPairs, calculateKeepStart } from "./keep-window.ts";
export type {
  EditLayer,
  LadderState,
  Layer,
  LayerContext,
  LayerRequest,
  NewestTurn,
  SummaryLayer,
  SummaryLayerContext,
} from "./layer.ts";
export { defineLayer, messagesTarget, SUMMARY_REQUEST, summaryDue } from "./layer.ts";
export type { LayerResult, LayerTimeOptions } from "./layer-result.ts";
export { resultFromEdits } from "./layer-result.ts";
export type { MicrocompactLayerOptions, MicrocompactOptions } from "./microcompact.ts";
export {
  CLEARED_RESULT_PREFIX,
  createMicrocompactLayer,
  isClearedResult,
  microcompact,
} from "./microcompact.ts";
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
export { findNewestTurn } from "./newest-turn.ts";
export type { ObservationMaskingOptions } from "./observation-masking.ts";
export { createObservationMaskingLayer, maskObservations } from "./observation-masking.ts";
export type { CachedInput, PromptCache, PromptCacheOptions } from "./prompt-cache.ts";
export { CACHE_TTL_MS, createPromptCache } from "./prompt-cache.ts";
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
export { replayConversation } from "./replay-conversation.ts";
export type { RequestSummarizerOptions } from "./request-summarizer.ts";
export { createRequestSummarizer } from "./request-summarizer.ts";
export type { SessionMemoryCompactOptions, SessionMemoryLayerOptions } from "./session-memory-compact.ts";
export { createSessionMemoryLayer, sessionMemoryCompact } from "./session-memory-compact.ts";
export type { SnipOptions } from "./snip-compact.ts";
export { createSnipLayer, snipCompact } from "./snip-compact.ts";
export type {
  CacheSafeParameters,
  SummarizeRequest,
  Summarizer,
  SummaryResult,
  SummaryScope,
} from "./summarizer.ts";
export { formatSummaryReply, missingSections, SUMMARY_SECTIONS } from "./summary-format.ts";
export { describeOutcome, findErrorLines, findExitStatus, toolOutputRecord } from "./tool-output-record.ts";
export type { ToolResultBudgetLayerOptions, ToolResultBudgetOptions } from "./tool-result-budget.ts";
export { applyToolResultBudget, createToolResultBudgetLayer } from "./tool-result-budget.ts";
export type { WorkingSetPolicyOptions } from "./working-set-policy.ts";
export { createWorkingSetPolicy } from "./working-set-policy.ts";
