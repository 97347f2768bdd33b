export type {
  CoreErrorCode,
  PromptTooLongDetails,
  ProviderRequestDetails,
  UnforgetErrorCode,
  UnforgetErrorOptions,
} from "./errors.ts";
export {
  AbortedError,
  ConfigurationError,
  ImportError,
  InvalidMessageError,
  InvalidOperationError,
  isUnforgetError,
  PromptTooLongError,
  ProviderRequestError,
  RequestTooLargeError,
  TranscriptCorruptError,
  TranscriptNotFoundError,
  TranscriptReadError,
  TranscriptWriteError,
  UnforgetError,
} from "./errors.ts";
export type {
  CacheControl,
  ContentBlock,
  ContentBlockType,
  CreateMessageInit,
  DocumentBlock,
  ImageBlock,
  MediaSource,
  Message,
  RedactedThinkingBlock,
  RequestMessage,
  Role,
  StopReason,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolResultContentBlock,
  ToolUseBlock,
  UnknownBlock,
  Usage,
  UsageIteration,
} from "./message.ts";
export {
  createMessage,
  createMessageId,
  createUsage,
  getMessageText,
  getToolResults,
  getToolUses,
  isToolResultBlock,
  isToolUseBlock,
  normalizeContent,
  normalizeContentBlock,
  toolResultText,
  usageContextTokens,
} from "./message.ts";
export type {
  ModelLimits,
  ModelLimitsEntry,
  ModelLimitsRegistry,
  ModelLimitsRegistryOptions,
} from "./model-limits.ts";
export {
  bedrockFoundationModelId,
  canonicalModelId,
  createModelLimitsRegistry,
  DEFAULT_MODEL_LIMITS,
  getModelLimits,
  UNKNOWN_MODEL_LIMITS,
} from "./model-limits.ts";
export type {
  AppliedContextEdit,
  ContextManagementConfig,
  ContextManagementEdit,
  CountTokensRequest,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStream,
  ModelStreamEvent,
  ProviderCapabilities,
  ProviderSpecificationVersion,
  RequestOptions,
  ThinkingConfig,
  TokenCount,
  TokenCounter,
  TokenCountMethod,
  ToolChoice,
  ToolDefinition,
} from "./provider.ts";
export { PROVIDER_SPECIFICATION_VERSION } from "./provider.ts";
export type { SessionMemoryNotes, SessionMemorySource } from "./session-memory-source.ts";
export type {
  ApiRoundGroup,
  RepairToolPairsOptions,
  ToolPairCheckOptions,
  ToolPairRepair,
  ToolPairRepairKind,
  ToolPairRepairResult,
  ToolPairViolation,
  ToolPairViolationKind,
} from "./tool-pairs.ts";
export {
  findToolPairViolations,
  groupByApiRound,
  LEADING_USER_TEXT,
  MISSING_TOOL_RESULT_TEXT,
  repairToolPairs,
} from "./tool-pairs.ts";
export type {
  Attachment,
  AttachmentEntry,
  CompactBoundaryEntry,
  CompactTrigger,
  ContextEdit,
  CreateTranscriptEntryDefaults,
  HookResultEntry,
  LayerDecisionEntry,
  LayerEdit,
  MessageEntry,
  MetadataEntry,
  ReplaceMessageEdit,
  ReplaceMessagesEdit,
  ReplaceToolResultEdit,
  SummaryEntry,
  TranscriptEntry,
  TranscriptEntryInput,
  TranscriptEntryType,
} from "./transcript-entry.ts";
export { createTranscriptEntry, TRANSCRIPT_FORMAT_VERSION } from "./transcript-entry.ts";
export type {
  ParsedTranscript,
  ParsedTranscriptLine,
  TranscriptEntryCheck,
  TranscriptProblem,
  TranscriptProblemKind,
  UnknownTranscriptEntry,
} from "./transcript-parse.ts";
export { checkTranscriptEntry, parseTranscript, parseTranscriptLine } from "./transcript-parse.ts";
export type { ProjectedContext, TimedLayerEdit } from "./transcript-projection.ts";
export {
  applyLayerEdits,
  attachmentMessage,
  extendRequestMessages,
  isContextEdit,
  projectContext,
  projectMessages,
  summaryAsMessage,
  toRequestMessages,
} from "./transcript-projection.ts";
export type { QuarantinedLine, ReadTranscriptOptions, ReadTranscriptResult } from "./transcript-reader.ts";
export { readTranscript, transcriptQuarantinePath } from "./transcript-reader.ts";
export type {
  StreamTranscriptOptions,
  TranscriptStreamEntry,
  TranscriptStreamItem,
  TranscriptStreamProblem,
} from "./transcript-stream.ts";
export { streamTranscript } from "./transcript-stream.ts";
export type { TranscriptFsyncMode, TranscriptWriterOptions } from "./transcript-writer.ts";
export { TranscriptWriter } from "./transcript-writer.ts";
export type { WriteFileAtomicOptions } from "./write-file-atomic.ts";
export { syncFolder, writeFileAtomic } from "./write-file-atomic.ts";
