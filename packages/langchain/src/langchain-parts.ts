import type {
  ContentBlock,
  MediaSource,
  Message,
  ToolResultContentBlock,
  UnknownBlock,
} from "@unforget/core";
import { isRecord } from "./is-record.ts";

export type Block = { type: string; [key: string]: unknown };

/**
 * What a LangChain content block or tool call carried that its Unforget block has no field for, kept on the
 * block (`langchain`). The block's own fields win: a block a layer changed goes back changed.
 */
export interface LangChainBlockStash {
  /**
   * The block's LangChain form: "image_url", "image", "file", "reasoning", "tool_call" (LangChain's own), or
   * "native" for a media block already in Unforget's (Anthropic's) shape.
   */
  form?: string;
  /** Fields of the LangChain block that no Unforget field holds, verbatim. */
  extra?: Record<string, unknown>;
  /** `image_url` given as an object: its fields besides `url` (`detail`, …). */
  imageUrl?: Record<string, unknown>;
  /** The media type field was absent. */
  noMimeType?: boolean;
  /** The tool call is in the message's `tool_calls`; these are its fields besides name, args and id. */
  toolCall?: Record<string, unknown>;
  /** The tool call is only in `tool_calls`, not in the content. */
  callOnly?: boolean;
  /** The tool call's `args`, when they differ from the content block's input. */
  args?: unknown;
  /** The tool call had no id (Unforget gave it one). */
  noId?: boolean;
  /** The tool call's place in `tool_calls` (their order need not be the content's). */
  callIndex?: number;
  /** The block is a LangChain block kept as it is. */
  verbatim?: boolean;
}

/** The LangChain message's own fields, kept in `metadata.langchain` so that the same message can be rebuilt. */
export interface LangChainMessageStash {
  /** The message type ("human", "ai", "tool", "system", "generic", "function"). */
  type: string;
  /** It was a chunk class (`AIMessageChunk`, …). */
  chunk?: boolean;
  /** The content was a string. */
  text?: boolean;
  /** `id`, `name`, `additional_kwargs`, `response_metadata`, `usage_metadata`, `invalid_tool_calls`, `tool_call_id`, `status`, `artifact`, `metadata`, `role`: those the message had. */
  fields: Record<string, unknown>;
}

export interface ConvertOptions {
  /** Called for a message or block shape this version does not model; the shape is kept as it is either way. */
  onUnknownShape?: (shape: string, detail: string) => void;
}

export type Report = (shape: string, detail: string) => void;

export const OPAQUE_MESSAGE = "langchain-message";
/** Unforget's marks on a message, carried in `additional_kwargs.unforget` (as `lc_source` marks LangChain's summaries). */
const MESSAGE_FLAGS = ["isMeta", "isObservation", "isCompactSummary"] as const;
type MessageFlag = (typeof MESSAGE_FLAGS)[number];

/** Takes Unforget's marks out of a message's `additional_kwargs` (the stash keeps the rest). */
export function takeFlags(fields: Record<string, unknown>): MessageFlag[] {
  const kwargs = fields.additional_kwargs;
  if (!isRecord(kwargs) || !isRecord(kwargs.unforget)) return [];
  const marks = kwargs.unforget;
  const flags = MESSAGE_FLAGS.filter((flag) => marks[flag] === true);
  if (flags.length === 0 || Object.keys(marks).length !== flags.length) return [];
  const { unforget: _marks, ...rest } = kwargs;
  if (Object.keys(rest).length > 0) fields.additional_kwargs = rest;
  else delete fields.additional_kwargs;
  return flags;
}

/** Puts Unforget's marks of a message into its `additional_kwargs` (those its LangChain type does not imply). */
export function giveFlags(
  fields: Record<string, unknown>,
  message: Message,
  stash: LangChainMessageStash | undefined,
): void {
  const implied = stash && ["system", "generic", "function"].includes(stash.type);
  const flags = MESSAGE_FLAGS.filter((flag) => message[flag] === true && !(flag === "isMeta" && implied));
  if (flags.length === 0) return;
  const kwargs = isRecord(fields.additional_kwargs) ? fields.additional_kwargs : {};
  fields.additional_kwargs = { ...kwargs, unforget: Object.fromEntries(flags.map((flag) => [flag, true])) };
}
export const MESSAGE_FIELDS = [
  "id",
  "name",
  "additional_kwargs",
  "response_metadata",
  "usage_metadata",
  "invalid_tool_calls",
  "tool_call_id",
  "status",
  "artifact",
  "metadata",
  "role",
] as const;
/** LangChain block types Unforget keeps as they are (no Unforget block models them; they travel with their message). */
export const OPAQUE_BLOCKS = new Set([
  "audio",
  "video",
  "text-plain",
  "non_standard",
  "server_tool_call",
  "server_tool_call_chunk",
  "server_tool_call_result",
  "tool_call_chunk",
  "invalid_tool_call",
  "input_json_delta",
  "server_tool_use",
  "web_search_tool_result",
  "citations_delta",
]);
export const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
/** Unforget media fields LangChain's standard blocks lack: they ride on the LangChain block under the same names. */
export const MEDIA_FIELDS = ["width", "height", "title", "context", "pages", "cache_control"] as const;

export function mediaFields(block: object): Record<string, unknown> {
  const record = block as Record<string, unknown>;
  return Object.fromEntries(
    MEDIA_FIELDS.flatMap((key) => (record[key] === undefined ? [] : [[key, record[key]]])),
  );
}

export function withStash<B extends ContentBlock | ToolResultContentBlock>(
  block: B,
  stash: LangChainBlockStash,
): B {
  const kept = Object.fromEntries(Object.entries(stash).filter(([, value]) => value !== undefined));
  return Object.keys(kept).length > 0 ? ({ ...block, langchain: kept } as B) : block;
}

/** The stash a block carries, when it came from a LangChain block. */
export function stashOf(block: ContentBlock | ToolResultContentBlock): LangChainBlockStash {
  const stash = (block as { langchain?: unknown }).langchain;
  return isRecord(stash) ? (stash as LangChainBlockStash) : {};
}

/** The block without the adapter's stash (what LangChain gets back for a block that was Unforget-shaped). */
export function withoutStash(block: ContentBlock | ToolResultContentBlock): Block {
  const rest: Record<string, unknown> = { ...block };
  delete rest.langchain;
  return rest as Block;
}

export function omit(
  block: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> | undefined {
  const rest = Object.fromEntries(Object.entries(block).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

export function opaque(block: unknown): UnknownBlock {
  const original =
    isRecord(block) && typeof block.type === "string" ? block : { type: "invalid", value: block };
  return withStash<UnknownBlock>(
    { type: "unknown", original: original as UnknownBlock["original"] },
    { verbatim: true },
  );
}

/** A LangChain standard media block (`url`, `data` or `fileId`, with `mimeType`) as an Unforget source. */
export function standardSource(block: Block, image: boolean): MediaSource | undefined {
  const mime = typeof block.mimeType === "string" ? block.mimeType : undefined;
  if (typeof block.url === "string") return { type: "url", url: block.url };
  if (typeof block.data === "string")
    return {
      type: "base64",
      media_type: mime ?? (image ? "image/*" : "application/octet-stream"),
      data: block.data,
    };
  if (typeof block.fileId === "string") return { type: "file", file_id: block.fileId };
  return undefined;
}
