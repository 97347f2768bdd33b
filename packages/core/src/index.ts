export type { Attachment } from "./attachment.ts";
export type { CacheablePrompt, CacheBreakpointOptions } from "./cache-breakpoints.ts";
export { withCacheBreakpoints } from "./cache-breakpoints.ts";
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
  InvalidMessageError,
  InvalidOperationError,
  isUnforgetError,
  PromptTooLongError,
  ProviderRequestError,
  RequestTooLargeError,
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
  contentBlocks,
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
export type { ModelRetirement } from "./model-retirements.ts";
export { modelRetirement } from "./model-retirements.ts";
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
  Tool,
  ToolContext,
  ToolOutput,
  ToolPermissionSubject,
  ToolResultRetention,
  ToolSessionState,
} from "./tool.ts";
export { toolOutputText } from "./tool.ts";
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
