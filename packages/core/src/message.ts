import { randomUUID } from "node:crypto";

/** Prompt-caching marker, passed through to providers that support it. */
export interface CacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export interface TextBlock {
  type: "text";
  text: string;
  cache_control?: CacheControl;
  /** Provider citations, kept verbatim. */
  citations?: unknown[];
}

export type MediaSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string }
  | { type: "file"; file_id: string }
  | { type: "text"; media_type: "text/plain"; data: string };

export interface ImageBlock {
  type: "image";
  source: MediaSource;
  /** Pixel dimensions when known; token estimators use them (width × height / 750). */
  width?: number;
  height?: number;
  cache_control?: CacheControl;
}

export interface DocumentBlock {
  type: "document";
  source: MediaSource;
  title?: string;
  context?: string;
  /** Page count when known; token estimators use it. */
  pages?: number;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: "tool_use";
  /** Unique within a conversation; the matching tool_result carries it as `tool_use_id`. */
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControl;
}

export type ToolResultContentBlock = TextBlock | ImageBlock | DocumentBlock;

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string | ToolResultContentBlock[];
  is_error?: boolean;
  cache_control?: CacheControl;
}

export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  /** Opaque provider signature; must be sent back unchanged with the block. */
  signature?: string;
}

export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

/**
 * A block whose type this version does not model (server tool use, web search results, a provider's
 * compaction block, …). It is preserved untouched so that nothing is ever dropped on a round trip.
 */
export interface UnknownBlock {
  type: "unknown";
  /** The block exactly as the provider (or an older/newer writer) produced it. */
  original: { type: string; [key: string]: unknown };
}

export type ContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | UnknownBlock;

export type ContentBlockType = ContentBlock["type"];

export type Role = "user" | "assistant";

/**
 * Token usage as the provider reported it for one response. Cached tokens still occupy the context
 * window, so the window occupancy is the sum of all four fields (see `usageContextTokens`).
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  /**
   * Per-pass usage when the provider ran more than one sampling pass for the response (server-side
   * compaction). The top-level fields leave the extra passes out, so cost must sum these.
   */
  iterations?: UsageIteration[];
  /** Cache writes split by time-to-live, when the provider reports the split. */
  cacheCreation?: { ephemeral5mInputTokens: number; ephemeral1hInputTokens: number };
}

/** One sampling pass of a response ("message", "compaction", …) with its own token counts. */
export interface UsageIteration {
  type: string;
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** Why the model stopped, normalised across providers. `rawStopReason` keeps the provider's word. */
export type StopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded"
  | "other";

export interface Message {
  /** Stable id, unique within a transcript. */
  id: string;
  role: Role;
  content: ContentBlock[];
  /** ISO-8601 time the message was created. */
  timestamp: string;
  /** Provider response id; assistant messages split from one response (parallel tool calls) share it. */
  responseId?: string;
  /** Usage reported by the provider for the response this message came from. */
  usage?: Usage;
  model?: string;
  stopReason?: StopReason;
  /** Synthetic message that is not the user's words (caveats, expansions, repair markers, summaries). */
  isMeta?: boolean;
  /** This user message carries a compaction summary. */
  isCompactSummary?: boolean;
  /**
   * A user-role message that carries environment output rather than the user's words (a tool run rendered
   * as text, as SWE-agent and mini-swe-agent send observations). Compaction treats it like a tool result.
   */
  isObservation?: boolean;
  /** Free-form metadata kept verbatim (importer provenance, app-specific fields). */
  metadata?: Record<string, unknown>;
}

/**
 * The part of a message a provider needs. `content` is blocks, or a string that stands for one text block
 * (as the provider APIs take it; an empty string is no block). `Message` is assignable to it.
 */
export interface RequestMessage {
  role: Role;
  content: string | ContentBlock[];
}

export function createMessageId(): string {
  return `msg_${randomUUID()}`;
}

export interface CreateMessageInit {
  id?: string;
  timestamp?: string;
  responseId?: string;
  usage?: Usage;
  model?: string;
  stopReason?: StopReason;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  isObservation?: boolean;
  metadata?: Record<string, unknown>;
}

/** Builds a message, normalising string content to one text block and filling id and timestamp. */
export function createMessage(
  role: Role,
  content: string | ContentBlock[],
  init: CreateMessageInit = {},
): Message {
  const message: Message = {
    id: init.id ?? createMessageId(),
    role,
    content: typeof content === "string" ? [{ type: "text", text: content }] : content,
    timestamp: init.timestamp ?? new Date().toISOString(),
  };
  if (init.responseId !== undefined) message.responseId = init.responseId;
  if (init.usage !== undefined) message.usage = init.usage;
  if (init.model !== undefined) message.model = init.model;
  if (init.stopReason !== undefined) message.stopReason = init.stopReason;
  if (init.isMeta) message.isMeta = true;
  if (init.isCompactSummary) message.isCompactSummary = true;
  if (init.isObservation) message.isObservation = true;
  if (init.metadata !== undefined) message.metadata = init.metadata;
  return message;
}

export function createUsage(partial: Partial<Usage> = {}): Usage {
  return {
    inputTokens: partial.inputTokens ?? 0,
    outputTokens: partial.outputTokens ?? 0,
    cacheCreationInputTokens: partial.cacheCreationInputTokens ?? 0,
    cacheReadInputTokens: partial.cacheReadInputTokens ?? 0,
  };
}

/** Tokens this response occupies in the context window: input + cache creation + cache read + output. */
export function usageContextTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens + usage.outputTokens;
}

export function isToolUseBlock(block: ContentBlock): block is ToolUseBlock {
  return block.type === "tool_use";
}

export function isToolResultBlock(block: ContentBlock): block is ToolResultBlock {
  return block.type === "tool_result";
}

export function getToolUses(message: Pick<Message, "content">): ToolUseBlock[] {
  return message.content.filter(isToolUseBlock);
}

export function getToolResults(message: Pick<Message, "content">): ToolResultBlock[] {
  return message.content.filter(isToolResultBlock);
}

/** The plain text of a message's text blocks (and string tool results), joined by newlines. */
export function getMessageText(message: Pick<Message, "content">): string {
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "tool_result") parts.push(toolResultText(block));
  }
  return parts.join("\n");
}

export function toolResultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set([
  "text",
  "image",
  "document",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
]);

/**
 * Turns any provider or file block into a `ContentBlock`. Known types are kept as they are; anything else
 * (or a known type missing its required fields) becomes an `UnknownBlock` holding the original.
 */
export function normalizeContentBlock(raw: unknown): ContentBlock {
  if (typeof raw === "string") return { type: "text", text: raw };
  if (raw === null || typeof raw !== "object" || typeof (raw as { type?: unknown }).type !== "string") {
    return { type: "unknown", original: { type: "invalid", value: raw } };
  }
  const block = raw as { type: string; [key: string]: unknown };
  if (block.type === "unknown" && isRecord(block.original) && typeof block.original.type === "string") {
    return block as unknown as UnknownBlock;
  }
  if (!KNOWN_BLOCK_TYPES.has(block.type) || !hasRequiredFields(block)) {
    return { type: "unknown", original: block };
  }
  if (block.type === "tool_result" && block.content === undefined) {
    return { ...block, content: "" } as unknown as ToolResultBlock;
  }
  return block as unknown as ContentBlock;
}

/** A request message's content as blocks: a string is one text block (none when empty); blocks stay as they are. */
export function contentBlocks(content: RequestMessage["content"]): ContentBlock[] {
  return typeof content === "string" ? normalizeContent(content) : content;
}

/** Normalises message content from a string or an array of raw blocks. */
export function normalizeContent(raw: unknown): ContentBlock[] {
  if (typeof raw === "string") return raw.length === 0 ? [] : [{ type: "text", text: raw }];
  if (Array.isArray(raw)) return raw.map(normalizeContentBlock);
  if (raw === undefined || raw === null) return [];
  return [normalizeContentBlock(raw)];
}

function hasRequiredFields(block: { type: string; [key: string]: unknown }): boolean {
  switch (block.type) {
    case "text":
      return typeof block.text === "string";
    case "image":
    case "document":
      return isRecord(block.source);
    case "tool_use":
      return typeof block.id === "string" && typeof block.name === "string";
    case "tool_result":
      return (
        typeof block.tool_use_id === "string" &&
        (block.content === undefined || typeof block.content === "string" || Array.isArray(block.content))
      );
    case "thinking":
      return typeof block.thinking === "string";
    case "redacted_thinking":
      return typeof block.data === "string";
    default:
      return false;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
