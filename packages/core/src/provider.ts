import type { CacheControl, ContentBlock, RequestMessage, StopReason, TextBlock, Usage } from "./message.ts";
import type { ModelLimits } from "./model-limits.ts";

/** Bumped on any breaking change to the contract; providers declare which version they implement. */
export const PROVIDER_SPECIFICATION_VERSION = "unforget-provider-v1" as const;
export type ProviderSpecificationVersion = typeof PROVIDER_SPECIFICATION_VERSION;

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the tool input (an object schema). */
  inputSchema: Record<string, unknown>;
  cache_control?: CacheControl;
}

export type ToolChoice =
  | { type: "auto"; disableParallelToolUse?: boolean }
  | { type: "any"; disableParallelToolUse?: boolean }
  | { type: "none" }
  | { type: "tool"; name: string; disableParallelToolUse?: boolean };

export type ThinkingConfig = { type: "enabled"; budgetTokens: number } | { type: "disabled" };

/**
 * Provider-side context management (Anthropic `context_management`). Providers without the capability
 * ignore it; `ProviderCapabilities.nativeContextManagement` says which ones honour it.
 */
export interface ContextManagementConfig {
  edits: ContextManagementEdit[];
}

export type ContextManagementEdit =
  | {
      type: "clear_tool_uses_20250919";
      trigger?: { type: "input_tokens" | "tool_uses"; value: number };
      keep?: { type: "tool_uses"; value: number };
      clearAtLeast?: { type: "input_tokens"; value: number };
      excludeTools?: string[];
      clearToolInputs?: boolean;
    }
  | { type: "clear_thinking_20251015"; keep?: { type: "thinking_turns"; value: number } | "all" }
  | { type: "compact_20260112"; trigger?: { type: "input_tokens"; value: number }; instructions?: string }
  | { type: string; [key: string]: unknown };

/** What the provider reports it did under `context_management`. */
export interface AppliedContextEdit {
  type: string;
  clearedInputTokens?: number;
  clearedToolUses?: number;
  clearedThinkingTurns?: number;
  [key: string]: unknown;
}

export interface ModelRequest {
  model: string;
  system?: string | TextBlock[];
  messages: RequestMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  thinking?: ThinkingConfig;
  contextManagement?: ContextManagementConfig;
  /**
   * Escape hatch for provider-specific fields, keyed by provider id
   * (e.g. `{ anthropic: { betas: ["context-1m-2025-08-07"] } }`). Other providers ignore other keys.
   */
  providerOptions?: Record<string, Record<string, unknown>>;
}

export type CountTokensRequest = Omit<
  ModelRequest,
  "maxTokens" | "temperature" | "topP" | "stopSequences"
> & {
  maxTokens?: number;
};

export interface ModelResponse {
  /** Provider response id; every message built from this response carries it as `responseId`. */
  id: string;
  model: string;
  role: "assistant";
  content: ContentBlock[];
  stopReason: StopReason;
  /** The provider's own stop reason string, unnormalised. */
  rawStopReason?: string;
  stopSequence?: string;
  usage: Usage;
  /** Edits the provider applied under `context_management`, when it reported them. */
  appliedContextEdits?: AppliedContextEdit[];
}

/** Normalised streaming events. Block indexes are positions in the final `content` array. */
export type ModelStreamEvent =
  | { type: "message_start"; id: string; model: string; usage: Usage }
  | { type: "block_start"; index: number; block: ContentBlock }
  | { type: "text_delta"; index: number; text: string }
  | { type: "thinking_delta"; index: number; thinking: string }
  | { type: "signature_delta"; index: number; signature: string }
  | { type: "tool_input_delta"; index: number; partialJson: string }
  | { type: "block_stop"; index: number }
  | {
      type: "message_delta";
      stopReason?: StopReason;
      rawStopReason?: string;
      stopSequence?: string;
      usage?: Partial<Usage>;
      appliedContextEdits?: AppliedContextEdit[];
    }
  | { type: "message_stop" };

/**
 * A streamed response. Iterate it for events, or await `finalResponse()` for the assembled response
 * (which consumes the stream if nobody iterates it). Errors, including a mid-stream prompt-too-long,
 * surface from both as typed `UnforgetError`s.
 */
export interface ModelStream extends AsyncIterable<ModelStreamEvent> {
  finalResponse(): Promise<ModelResponse>;
}

export interface RequestOptions {
  /** Cancels the request and any retry wait; the call rejects with `AbortedError`. */
  signal?: AbortSignal;
  /** Overrides the provider's retry count for this call (0 disables retries). */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds. */
  timeoutMs?: number;
  /** Extra HTTP headers, for providers that speak HTTP. */
  headers?: Record<string, string>;
}

export type TokenCountMethod = "native" | "heuristic" | "usage-anchored";

export interface TokenCount {
  inputTokens: number;
  /** How the number was produced; callers that need exactness check this. */
  method: TokenCountMethod;
  /** Why a fallback was used, when one was. */
  fallbackReason?: string;
}

/** Anything that can count the input tokens of a request. Providers implement it natively. */
export interface TokenCounter {
  /** Called before a model call to learn the request's size; may call the provider's counting endpoint. */
  countTokens(request: CountTokensRequest, options?: RequestOptions): Promise<TokenCount>;
}

export interface ProviderCapabilities {
  /** The provider has a token counting endpoint for at least some models. */
  nativeTokenCounting: boolean;
  /** The provider can manage context itself (clear tool uses / thinking, server compaction). */
  nativeContextManagement: boolean;
  /** `cache_control` markers are honoured. */
  promptCaching: boolean;
  /** Extended thinking blocks are supported. */
  thinking: boolean;
}

/**
 * The one contract every model provider implements. Nothing outside a provider package sees an SDK type:
 * requests, responses, usage, stop reasons and errors are all in Unforget's own model.
 */
export interface ModelProvider extends TokenCounter {
  /** Contract version this provider implements. */
  readonly specificationVersion: ProviderSpecificationVersion;
  /** Stable provider id ("anthropic", "bedrock", "vertex", …), used in errors and usage records. */
  readonly providerId: string;
  /** Static capabilities; checked by layers before they ask for provider-side features. */
  readonly capabilities: ProviderCapabilities;
  /** Sends one request and resolves with the whole response. Retries transient failures itself. */
  createMessage(request: ModelRequest, options?: RequestOptions): Promise<ModelResponse>;
  /** Sends one request and streams the response. Retries only failures before the first event. */
  streamMessage(request: ModelRequest, options?: RequestOptions): ModelStream;
  /** Context window and output limit for a model id in this provider's naming. Never throws. */
  getModelLimits(model: string): ModelLimits;
}
