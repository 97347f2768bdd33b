export type { CacheBreak, CacheBreakDetector } from "./cache/cache-break-detector.ts";
export { createCacheBreakDetector } from "./cache/cache-break-detector.ts";
export type { CachedInput, PromptCache, PromptCacheOptions } from "./cache/prompt-cache.ts";
export { CACHE_TTL_MS, createPromptCache } from "./cache/prompt-cache.ts";
export type { CompactionFailureReason } from "./compact-error.ts";
export {
  CompactionDisabledError,
  CompactionFailedError,
  ContextOverflowError,
  PinLimitError,
  PinNotFoundError,
} from "./compact-error.ts";
export type { CarriedUserMessage, FoldedUserMessages } from "./conversation/carried-user-messages.ts";
export type { KeepWindowOptions } from "./conversation/keep-window.ts";
export { adjustForPairs, calculateKeepStart } from "./conversation/keep-window.ts";
export { findNewestTurn, type NewestTurn } from "./conversation/newest-turn.ts";
export type {
  HostBreakpoints,
  HostCodec,
  HostCodecContext,
  HostConversation,
  HostConversationListener,
  HostConversationOptions,
  HostEvent,
  HostPrepared,
} from "./host/host-conversation.ts";
export { createHostConversation } from "./host/host-conversation.ts";
export { CLEARED_RESULT_PREFIX, isClearedResult } from "./layers/clearable-outputs.ts";
export type { CollapseLayerOptions, CollapseOptions } from "./layers/collapse-context.ts";
export { collapseContext, createCollapseLayer } from "./layers/collapse-context.ts";
export type {
  EditLayer,
  LadderState,
  Layer,
  LayerContext,
  LayerRequest,
  SummaryLayer,
  SummaryLayerContext,
} from "./layers/layer.ts";
export { defineLayer, messagesTarget, SUMMARY_REQUEST, summaryDue } from "./layers/layer.ts";
export type { LayerResult, LayerTimeOptions } from "./layers/layer-result.ts";
export { resultFromEdits } from "./layers/layer-result.ts";
export type { MicrocompactLayerOptions, MicrocompactOptions } from "./layers/microcompact.ts";
export { createMicrocompactLayer, microcompact } from "./layers/microcompact.ts";
export type { ObservationMaskingOptions } from "./layers/observation-masking.ts";
export { createObservationMaskingLayer, maskObservations } from "./layers/observation-masking.ts";
export type {
  SessionMemoryCompactOptions,
  SessionMemoryLayerOptions,
} from "./layers/session-memory-compact.ts";
export { createSessionMemoryLayer, sessionMemoryCompact } from "./layers/session-memory-compact.ts";
export type { SnipOptions } from "./layers/snip-compact.ts";
export { createSnipLayer, snipCompact } from "./layers/snip-compact.ts";
export type { ToolResultBudgetLayerOptions, ToolResultBudgetOptions } from "./layers/tool-result-budget.ts";
export { applyToolResultBudget, createToolResultBudgetLayer } from "./layers/tool-result-budget.ts";
export type { CircuitBreaker, CircuitBreakerOptions } from "./manager/circuit-breaker.ts";
export { createCircuitBreaker } from "./manager/circuit-breaker.ts";
export type {
  CompactionPreview,
  ContextEvent,
  ContextEventListener,
  DeclinedCompaction,
  LayerReport,
  SummaryFallback,
} from "./manager/context-events.ts";
export type {
  CompactOptions,
  ContextManager,
  ContextStatus,
  PrepareResult,
} from "./manager/context-manager.ts";
export { createContextManager } from "./manager/context-manager.ts";
export type {
  ContextManagerConfig,
  ContextManagerOptions,
  PrepareOptions,
  ThresholdSetting,
} from "./manager/context-manager-options.ts";
export { createCompactTool, createContextStatusTool, createSnipTool } from "./manager/context-tools.ts";
export type { TranscriptSink } from "./manager/context-view.ts";
export { createDefaultLayers } from "./manager/default-ladder.ts";
export type { NativeContextOptions, ServerCompaction } from "./manager/native-context.ts";
export {
  billedInputTokens,
  buildContextManagement,
  getServerCompaction,
  onDemandCompactionOptions,
  portableMessages,
  supportsNativeContext,
} from "./manager/native-context.ts";
export type { PinnedItem, PinsStatus } from "./manager/pins.ts";
export type {
  CallPlan,
  CompactionPolicy,
  FixedLevelPolicyOptions,
  PolicyInput,
} from "./policy/compaction-policy.ts";
export { createFixedLevelPolicy } from "./policy/compaction-policy.ts";
export type { WorkingSetPolicyOptions } from "./policy/working-set-policy.ts";
export { createWorkingSetPolicy } from "./policy/working-set-policy.ts";
export type { ReplayOptions } from "./replay/replay-conversation.ts";
export { replayConversation } from "./replay/replay-conversation.ts";
export type { ReplayCall, ReplayResult, ReplayStats } from "./replay/replay-types.ts";
export type { CompactConversationOptions, SummaryLayerOptions } from "./summary/compact-conversation.ts";
export {
  compactConversation,
  createSummaryLayer,
  prepareForSummary,
} from "./summary/compact-conversation.ts";
export type { CompactPromptOptions } from "./summary/compact-prompt.ts";
export { buildCompactPrompt } from "./summary/compact-prompt.ts";
export type { CompactionOutcome, CompactRange, ContinuationStyle } from "./summary/compaction-outcome.ts";
export type { ExtractiveSummarizerOptions } from "./summary/extractive-summarizer.ts";
export { createExtractiveSummarizer } from "./summary/extractive-summarizer.ts";
export type { ModelSummarizerOptions } from "./summary/model-summarizer.ts";
export { createModelSummarizer } from "./summary/model-summarizer.ts";
export type {
  AttachmentProvider,
  RecentFilesOptions,
  RehydrationContext,
  TodosOptions,
} from "./summary/rehydration.ts";
export {
  createCallbackProvider,
  createInstructionsProvider,
  createRecentFilesProvider,
  createSkillsProvider,
  createTodosProvider,
} from "./summary/rehydration.ts";
export type { RequestSummarizerOptions } from "./summary/request-summarizer.ts";
export { createRequestSummarizer } from "./summary/request-summarizer.ts";
export type {
  CacheSafeParameters,
  SummarizeRequest,
  Summarizer,
  SummaryResult,
  SummaryScope,
} from "./summary/summarizer.ts";
export { formatSummaryReply, missingSections, SUMMARY_SECTIONS } from "./summary/summary-format.ts";
export { summaryMessageText } from "./summary/summary-message.ts";
export type { CompactableTools, ResultRetentionSetting } from "./tool-outputs/compactable-tools.ts";
export {
  compactablePredicate,
  DEFAULT_COMPACTABLE_TOOLS,
  firstRetention,
} from "./tool-outputs/compactable-tools.ts";
export { truncateMiddle } from "./tool-outputs/middle-out.ts";
export {
  describeOutcome,
  findErrorLines,
  findExitStatus,
  toolOutputRecord,
} from "./tool-outputs/tool-output-record.ts";
