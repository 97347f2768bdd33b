export type {
  UnforgetErrorCode,
  UnforgetErrorOptions,
  PromptTooLongDetails,
  ProviderRequestDetails,
} from "./errors.ts";
export {
  UnforgetError,
  isUnforgetError,
  PromptTooLongError,
  RequestTooLargeError,
  ProviderRequestError,
  TranscriptCorruptError,
  TranscriptWriteError,
  InvalidMessageError,
  ImportError,
  ConfigurationError,
  AbortedError,
  InvalidOperationError,
} from "./errors.ts";

export type {
  CacheControl,
  TextBlock,
  MediaSource,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultContentBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  UnknownBlock,
  ContentBlock,
  ContentBlockType,
  Role,
  Usage,
  StopReason,
  Message,
  RequestMessage,
  CreateMessageInit,
} from "./message.ts";
export {
  createMessageId,
  createMessage,
  createUsage,
  usageContextTokens,
  isToolUseBlock,
  isToolResultBlock,
  getToolUses,
  getToolResults,
  getMessageText,
  toolResultText,
  normalizeContentBlock,
  normalizeContent,
  isRecord,
} from "./message.ts";

export type {
  ProviderSpecificationVersion,
  ToolDefinition,
  ToolChoice,
  ThinkingConfig,
  ContextManagementConfig,
  ContextManagementEdit,
  AppliedContextEdit,
  ModelRequest,
  CountTokensRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelStream,
  RequestOptions,
  TokenCountMethod,
  TokenCount,
  TokenCounter,
  ProviderCapabilities,
  ModelProvider,
} from "./provider.ts";
export { PROVIDER_SPECIFICATION_VERSION } from "./provider.ts";

export { ModelResponseAccumulator, createModelStream } from "./model-stream.ts";

export type {
  ModelLimits,
  ModelLimitsEntry,
  ModelLimitsRegistry,
  ModelLimitsRegistryOptions,
} from "./model-limits.ts";
export {
  UNKNOWN_MODEL_LIMITS,
  DEFAULT_MODEL_LIMITS,
  canonicalModelId,
  createModelLimitsRegistry,
  getModelLimits,
} from "./model-limits.ts";

export type {
  MessageEntry,
  CompactTrigger,
  CompactBoundaryEntry,
  SummaryEntry,
  Attachment,
  AttachmentEntry,
  LayerEdit,
  LayerDecisionEntry,
  HookResultEntry,
  MetadataEntry,
  TranscriptEntry,
  TranscriptEntryType,
} from "./transcript-entry.ts";
export { TRANSCRIPT_FORMAT_VERSION } from "./transcript-entry.ts";

export type {
  ToolPairViolationKind,
  ToolPairViolation,
  ToolPairCheckOptions,
  ToolPairRepairKind,
  ToolPairRepair,
  ToolPairRepairResult,
  RepairToolPairsOptions,
  ApiRoundGroup,
} from "./tool-pairs.ts";
export {
  findToolPairViolations,
  repairToolPairs,
  groupByApiRound,
  MISSING_TOOL_RESULT_TEXT,
  LEADING_USER_TEXT,
} from "./tool-pairs.ts";
