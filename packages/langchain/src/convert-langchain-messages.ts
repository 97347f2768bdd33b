import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  HumanMessageChunk,
  isBaseMessage,
  isBaseMessageChunk,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
  type UsageMetadata,
} from "@langchain/core/messages";
import {
  type ContentBlock,
  createMessage,
  type DocumentBlock,
  type ImageBlock,
  type MediaSource,
  type Message,
  normalizeContentBlock,
  type TextBlock,
  type ToolResultBlock,
  type ToolResultContentBlock,
  type ToolUseBlock,
  type UnknownBlock,
  type Usage,
} from "@unforget/core";
import { isRecord } from "./is-record.ts";

type Block = { type: string; [key: string]: unknown };

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

type Report = (shape: string, detail: string) => void;

const OPAQUE_MESSAGE = "langchain-message";
/** Unforget's marks on a message, carried in `additional_kwargs.unforget` (as `lc_source` marks LangChain's summaries). */
const MESSAGE_FLAGS = ["isMeta", "isObservation", "isCompactSummary"] as const;
type MessageFlag = (typeof MESSAGE_FLAGS)[number];

/** Takes Unforget's marks out of a message's `additional_kwargs` (the stash keeps the rest). */
function takeFlags(fields: Record<string, unknown>): MessageFlag[] {
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
function giveFlags(
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
const MESSAGE_FIELDS = [
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
const OPAQUE_BLOCKS = new Set([
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
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
/** Unforget media fields LangChain's standard blocks lack: they ride on the LangChain block under the same names. */
const MEDIA_FIELDS = ["width", "height", "title", "context", "pages", "cache_control"] as const;

function mediaFields(block: object): Record<string, unknown> {
  const record = block as Record<string, unknown>;
  return Object.fromEntries(
    MEDIA_FIELDS.flatMap((key) => (record[key] === undefined ? [] : [[key, record[key]]])),
  );
}

function withStash<B extends ContentBlock | ToolResultContentBlock>(block: B, stash: LangChainBlockStash): B {
  const kept = Object.fromEntries(Object.entries(stash).filter(([, value]) => value !== undefined));
  return Object.keys(kept).length > 0 ? ({ ...block, langchain: kept } as B) : block;
}

/** The stash a block carries, when it came from a LangChain block. */
function stashOf(block: ContentBlock | ToolResultContentBlock): LangChainBlockStash {
  const stash = (block as { langchain?: unknown }).langchain;
  return isRecord(stash) ? (stash as LangChainBlockStash) : {};
}

/** The block without the adapter's stash (what LangChain gets back for a block that was Unforget-shaped). */
function withoutStash(block: ContentBlock | ToolResultContentBlock): Block {
  const { langchain: _stash, ...rest } = block as unknown as Block & { langchain?: unknown };
  return rest as Block;
}

function omit(block: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> | undefined {
  const rest = Object.fromEntries(Object.entries(block).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function opaque(block: unknown): UnknownBlock {
  const original =
    isRecord(block) && typeof block.type === "string" ? block : { type: "invalid", value: block };
  return withStash<UnknownBlock>(
    { type: "unknown", original: original as UnknownBlock["original"] },
    { verbatim: true },
  );
}

/** A LangChain standard media block (`url`, `data` or `fileId`, with `mimeType`) as an Unforget source. */
function standardSource(block: Block, image: boolean): MediaSource | undefined {
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

/** One LangChain content block as an Unforget block (an Unforget-shaped block is taken as it is). */
function decodeBlock(block: unknown, role: string, report: Report): ContentBlock {
  if (typeof block === "string") return { type: "text", text: block };
  if (!isRecord(block) || typeof block.type !== "string") {
    report(
      `${role} content block without a type`,
      `a ${role} content block without a type was kept as it is`,
    );
    return opaque(block);
  }
  const typed = block as Block;
  // Anthropic's shapes (which LangChain's Anthropic integration uses) are Unforget's own.
  const normalized = normalizeContentBlock(typed);
  // A copy: the adapter may add its stash to the block, never to the caller's object.
  if (normalized.type === "image" || normalized.type === "document")
    return withStash({ ...normalized }, { form: "native" });
  if (normalized.type !== "unknown") return { ...normalized };
  switch (typed.type) {
    case "image_url": {
      const value = typed.image_url;
      const url =
        typeof value === "string"
          ? value
          : isRecord(value) && typeof value.url === "string"
            ? value.url
            : undefined;
      if (url === undefined) break;
      const data = DATA_URL.exec(url);
      const source: MediaSource = data
        ? { type: "base64", media_type: data[1]!, data: data[2]! }
        : { type: "url", url };
      return withStash<ImageBlock>(
        { type: "image", source },
        {
          form: "image_url",
          extra: omit(typed, ["type", "image_url"]),
          ...(isRecord(value) ? { imageUrl: omit(value, ["url"]) ?? {} } : {}),
        },
      );
    }
    case "image":
    case "file": {
      const image =
        typed.type === "image" || (typeof typed.mimeType === "string" && typed.mimeType.startsWith("image"));
      const source = standardSource(typed, image);
      if (!source) break;
      const stash: LangChainBlockStash = {
        form: typed.type,
        extra: omit(typed, ["type", "url", "data", "fileId", "mimeType", ...MEDIA_FIELDS]),
        ...(typeof typed.mimeType === "string" ? {} : { noMimeType: true }),
      };
      if (typeof typed.mimeType === "string" && source.type !== "base64")
        stash.extra = { ...stash.extra, mimeType: typed.mimeType };
      const fields = mediaFields(typed);
      return image
        ? withStash<ImageBlock>({ type: "image", source, ...fields }, stash)
        : withStash<DocumentBlock>({ type: "document", source, ...fields }, stash);
    }
    case "reasoning":
      if (typeof typed.reasoning !== "string") break;
      return withStash(
        { type: "thinking", thinking: typed.reasoning },
        { form: "reasoning", extra: omit(typed, ["type", "reasoning"]) },
      );
    case "tool_call":
      if (typeof typed.id !== "string" || typeof typed.name !== "string") break;
      return withStash<ToolUseBlock>(
        { type: "tool_use", id: typed.id, name: typed.name, input: typed.args },
        { form: "tool_call", extra: omit(typed, ["type", "id", "name", "args"]) },
      );
    default:
      if (OPAQUE_BLOCKS.has(typed.type)) return opaque(typed);
  }
  report(
    `${role} content block ${typed.type}`,
    `a ${role} content block of type ${typed.type} was kept as it is`,
  );
  return opaque(typed);
}

function encodeSource(source: MediaSource): Record<string, unknown> {
  switch (source.type) {
    case "base64":
      return { data: source.data, mimeType: source.media_type };
    case "url":
      return { url: source.url };
    case "file":
      return { fileId: source.file_id };
    case "text":
      return { data: Buffer.from(source.data).toString("base64"), mimeType: source.media_type };
  }
}

/** An Unforget block as a LangChain content block: its own form back, or LangChain's standard block for a new one. */
function encodeBlock(block: ContentBlock | ToolResultContentBlock): Block {
  const stash = stashOf(block);
  if (block.type === "unknown") return block.original;
  switch (stash.form) {
    case "image_url":
      if (block.type === "image") {
        const url =
          block.source.type === "base64"
            ? `data:${block.source.media_type};base64,${block.source.data}`
            : block.source.type === "url"
              ? block.source.url
              : block.source.type === "file"
                ? block.source.file_id
                : block.source.data;
        return {
          ...stash.extra,
          type: "image_url",
          image_url: stash.imageUrl ? { ...stash.imageUrl, url } : url,
        };
      }
      break;
    case "image":
    case "file":
      if (block.type === "image" || block.type === "document") {
        const source = encodeSource(block.source);
        if (stash.noMimeType) delete source.mimeType;
        return { ...stash.extra, type: stash.form, ...source, ...mediaFields(block) };
      }
      break;
    case "reasoning":
      if (block.type === "thinking") return { ...stash.extra, type: "reasoning", reasoning: block.thinking };
      break;
    case "tool_call":
      if (block.type === "tool_use")
        return { ...stash.extra, type: "tool_call", id: block.id, name: block.name, args: block.input };
      break;
  }
  if (stash.form === undefined && !stash.verbatim && (block.type === "image" || block.type === "document")) {
    // A new media block: LangChain's standard form, which every integration reads.
    return {
      type: block.type === "image" ? "image" : "file",
      ...encodeSource(block.source),
      ...mediaFields(block),
    };
  }
  return withoutStash(block);
}

function usageFromLangChain(message: BaseMessage & { usage_metadata?: UsageMetadata }): Usage | undefined {
  const metadata = message.usage_metadata;
  if (isRecord(metadata) && typeof metadata.input_tokens === "number") {
    const details = isRecord(metadata.input_token_details) ? metadata.input_token_details : {};
    const read = typeof details.cache_read === "number" ? details.cache_read : 0;
    const write = typeof details.cache_creation === "number" ? details.cache_creation : 0;
    return {
      inputTokens: Math.max(0, metadata.input_tokens - read - write),
      outputTokens: typeof metadata.output_tokens === "number" ? metadata.output_tokens : 0,
      cacheCreationInputTokens: write,
      cacheReadInputTokens: read,
    };
  }
  // Integrations that only fill the provider's raw usage: Anthropic's shape, then OpenAI's legacy one.
  const raw = isRecord(message.response_metadata) ? message.response_metadata : {};
  const usage = isRecord(raw.usage) ? raw.usage : undefined;
  if (usage && typeof usage.input_tokens === "number") {
    const number = (value: unknown) => (typeof value === "number" ? value : 0);
    return {
      inputTokens: usage.input_tokens,
      outputTokens: number(usage.output_tokens),
      cacheCreationInputTokens: number(usage.cache_creation_input_tokens),
      cacheReadInputTokens: number(usage.cache_read_input_tokens),
    };
  }
  const legacy = isRecord(raw.tokenUsage) ? raw.tokenUsage : undefined;
  if (legacy && typeof legacy.promptTokens === "number") {
    return {
      inputTokens: legacy.promptTokens,
      outputTokens: typeof legacy.completionTokens === "number" ? legacy.completionTokens : 0,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    };
  }
  return undefined;
}

function usageMetadata(usage: Usage): UsageMetadata {
  const input = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  return {
    input_tokens: input,
    output_tokens: usage.outputTokens,
    total_tokens: input + usage.outputTokens,
    input_token_details: {
      cache_read: usage.cacheReadInputTokens,
      cache_creation: usage.cacheCreationInputTokens,
    },
  };
}

/** Tool result content: a string, or text, image and document blocks (anything else a placeholder carrying it). */
function decodeToolContent(content: unknown, report: Report): string | ToolResultContentBlock[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((item): ToolResultContentBlock => {
    const block = decodeBlock(item, "tool", report);
    if (block.type === "text" || block.type === "image" || block.type === "document") return block;
    const type = block.type === "unknown" ? block.original.type : block.type;
    return withStash<TextBlock>({ type: "text", text: `[${type}]` }, { verbatim: true, extra: { item } });
  });
}

function encodeToolContent(content: string | ToolResultContentBlock[]): string | Block[] {
  if (typeof content === "string") return content;
  return content.map((block) => {
    const stash = stashOf(block);
    if (block.type === "text" && stash.verbatim && isRecord(stash.extra?.item))
      return stash.extra.item as Block;
    return encodeBlock(block);
  });
}

function fieldsOf(message: BaseMessage): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const record = message as unknown as Record<string, unknown>;
  for (const key of MESSAGE_FIELDS) {
    const value = record[key];
    if (value === undefined) continue;
    if (isRecord(value) && Object.keys(value).length === 0 && key !== "artifact") continue;
    if (Array.isArray(value) && value.length === 0 && key === "invalid_tool_calls") continue;
    fields[key] = value;
  }
  return fields;
}

/** One LangChain message as an Unforget message (its id, its fields in `metadata.langchain`). */
export function decodeLangChainMessage(message: BaseMessage, report: Report = () => {}): Message {
  const type = isBaseMessage(message) ? message.getType() : undefined;
  if (
    !isBaseMessage(message) ||
    !["human", "ai", "tool", "system", "generic", "function"].includes(type ?? "")
  ) {
    const shape = isBaseMessage(message) ? `message type ${type}` : "a value that is not a LangChain message";
    report(shape, `${isBaseMessage(message) ? `a message of type ${type}` : shape} was kept as it is`);
    return createMessage("user", [{ type: "unknown", original: { type: OPAQUE_MESSAGE, message } }], {
      isMeta: true,
    });
  }
  const stash: LangChainMessageStash = { type: type!, fields: fieldsOf(message) };
  const flags = takeFlags(stash.fields);
  if (isBaseMessageChunk(message)) stash.chunk = true;
  const content = message.content as unknown;
  if (typeof content === "string") stash.text = true;
  const role = type === "ai" ? "assistant" : "user";
  let blocks: ContentBlock[];
  if (type === "tool") {
    const result: ToolResultBlock = {
      type: "tool_result",
      tool_use_id: String((message as ToolMessage).tool_call_id),
      content: decodeToolContent(content, report),
    };
    if ((message as ToolMessage).status === "error") result.is_error = true;
    blocks = [result];
  } else {
    blocks =
      typeof content === "string"
        ? content.length > 0
          ? [{ type: "text", text: content }]
          : []
        : Array.isArray(content)
          ? content.map((block) => decodeBlock(block, type!, report))
          : [];
    if (type === "ai") blocks = withToolCalls(blocks, (message as AIMessage).tool_calls ?? []);
  }
  const init: Parameters<typeof createMessage>[2] = { metadata: { langchain: stash } };
  if (typeof message.id === "string") init.id = message.id;
  if (type === "system" || type === "generic" || type === "function") init.isMeta = true;
  for (const flag of flags) init[flag] = true;
  if (type === "ai") {
    const usage = usageFromLangChain(message);
    if (usage) init.usage = usage;
    const metadata = isRecord(message.response_metadata) ? message.response_metadata : {};
    const responseId = typeof metadata.id === "string" ? metadata.id : message.id;
    if (typeof responseId === "string") init.responseId = responseId;
    const model = metadata.model_name ?? metadata.model;
    if (typeof model === "string") init.model = model;
  }
  return createMessage(role, blocks, init);
}

/** The content's tool-use blocks joined with the message's `tool_calls`: each call once, its fields kept. */
function withToolCalls(blocks: ContentBlock[], toolCalls: readonly unknown[]): ContentBlock[] {
  const out = [...blocks];
  for (const [callIndex, call] of toolCalls.entries()) {
    if (!isRecord(call) || typeof call.name !== "string") continue;
    const extra = omit(call, ["id", "name", "args"]) ?? {};
    const index =
      typeof call.id === "string"
        ? out.findIndex(
            (block) => block.type === "tool_use" && block.id === call.id && !stashOf(block).toolCall,
          )
        : -1;
    if (index >= 0) {
      const block = out[index] as ToolUseBlock;
      out[index] = withStash(block, {
        ...stashOf(block),
        toolCall: extra,
        callIndex,
        ...(isDeepStrictEqual(block.input, call.args) ? {} : { args: call.args }),
      });
    } else {
      const id = typeof call.id === "string" ? call.id : `toolu_langchain_${randomUUID()}`;
      out.push(
        withStash<ToolUseBlock>(
          { type: "tool_use", id, name: call.name, input: call.args },
          {
            toolCall: extra,
            callIndex,
            callOnly: true,
            ...(typeof call.id === "string" ? {} : { noId: true }),
          },
        ),
      );
    }
  }
  return out;
}

type Fields = Record<string, unknown> & { content: unknown };

function build(type: string, chunk: boolean, fields: Fields): BaseMessage {
  switch (type) {
    case "ai":
      return chunk ? new AIMessageChunk(fields as never) : new AIMessage(fields as never);
    case "tool":
      return chunk ? new ToolMessageChunk(fields as never) : new ToolMessage(fields as never);
    case "system":
      return chunk ? new SystemMessageChunk(fields as never) : new SystemMessage(fields as never);
    case "generic":
      return new ChatMessage(fields as never);
    case "function":
      return new FunctionMessage(fields as never);
    default:
      return chunk ? new HumanMessageChunk(fields as never) : new HumanMessage(fields as never);
  }
}

/** Content as LangChain holds it: a string when it was one (or, for a new message, one plain text), else blocks. */
function contentOf(blocks: Block[], stash: LangChainMessageStash | undefined): string | Block[] {
  const plain = blocks.length === 1 && blocks[0]!.type === "text" && Object.keys(blocks[0]!).length === 2;
  const asString = stash ? stash.text === true : true;
  if (asString && blocks.length === 0) return "";
  // A new message's one plain text goes as a string, unless it is empty (that string would read back as no block).
  if (asString && plain && (stash !== undefined || blocks[0]!.text !== "")) return String(blocks[0]!.text);
  return blocks;
}

/**
 * An Unforget message as LangChain messages: one, or several when a user message holds tool results (one
 * `ToolMessage` each, then a `HumanMessage` with the rest).
 */
export function encodeLangChainMessage(message: Message): BaseMessage[] {
  const only = message.content.length === 1 ? message.content[0] : undefined;
  if (only?.type === "unknown" && only.original.type === OPAQUE_MESSAGE)
    return [only.original.message as BaseMessage];
  const stash = isRecord(message.metadata?.langchain)
    ? (message.metadata.langchain as unknown as LangChainMessageStash)
    : undefined;
  const fields: Record<string, unknown> = stash ? { ...stash.fields } : { id: message.id };
  giveFlags(fields, message, stash);
  if (message.role === "assistant") {
    const toolCalls: { call: Record<string, unknown>; index: number }[] = [];
    const content: Block[] = [];
    for (const block of message.content) {
      if (block.type === "tool_use") {
        const blockStash = stashOf(block);
        // A LangChain message's tool-use blocks came from its content unless marked call-only, and are in its
        // tool_calls when marked so; a new message's (a summary's, an Unforget one's) are tool_calls only.
        const inCalls = stash ? blockStash.toolCall !== undefined : true;
        const inContent = stash ? !blockStash.callOnly : false;
        if (inCalls) {
          const call: Record<string, unknown> = stash ? { ...blockStash.toolCall } : { type: "tool_call" };
          call.name = block.name;
          call.args = blockStash.args ?? block.input;
          if (!blockStash.noId) call.id = block.id;
          toolCalls.push({ call, index: blockStash.callIndex ?? toolCalls.length });
        }
        if (!inContent) continue;
      }
      content.push(encodeBlock(block));
    }
    if (!stash && message.usage) fields.usage_metadata = usageMetadata(message.usage);
    return [
      build("ai", stash?.chunk === true, {
        ...fields,
        content: contentOf(content, stash),
        tool_calls: toolCalls.sort((a, b) => a.index - b.index).map((entry) => entry.call),
      }),
    ];
  }
  const results = message.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
  const rest = message.content.filter((block) => block.type !== "tool_result");
  if (stash?.type === "tool" && results.length === 1 && rest.length === 0) {
    const result = results[0]!;
    const toolFields: Fields = {
      ...fields,
      content: encodeToolContent(result.content),
      tool_call_id: result.tool_use_id,
    };
    if (result.is_error) toolFields.status = "error";
    else if (toolFields.status === "error") delete toolFields.status;
    return [build("tool", stash.chunk === true, toolFields)];
  }
  const out: BaseMessage[] = results.map(
    (result, index) =>
      new ToolMessage({
        id: index === 0 && rest.length === 0 ? String(fields.id) : `${message.id}_${index}`,
        content: encodeToolContent(result.content) as string,
        tool_call_id: result.tool_use_id,
        ...(result.is_error ? { status: "error" as const } : {}),
      }),
  );
  if (rest.length > 0 || results.length === 0) {
    const type = stash && stash.type !== "tool" ? stash.type : "human";
    const content = contentOf(rest.map(encodeBlock), stash?.type === "tool" ? undefined : stash);
    out.push(build(type, stash?.chunk === true, { ...fields, content }));
  }
  return out;
}

/**
 * LangChain messages as Unforget messages, losing nothing: content blocks (LangChain's standard ones and the
 * providers' own), tool calls and invalid ones, tool messages with their status and artifact,
 * `additional_kwargs`, `response_metadata`, `usage_metadata` (which becomes the usage counts anchor on). What
 * this version does not model is kept as it is.
 */
export function fromLangChainMessages(
  messages: readonly BaseMessage[],
  options: ConvertOptions = {},
): Message[] {
  const report = options.onUnknownShape ?? (() => {});
  return messages.map((message) => decodeLangChainMessage(message, report));
}

/** Unforget messages as LangChain messages: the inverse of `fromLangChainMessages`, and LangChain's own shapes for new ones. */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  return messages.flatMap((message) => encodeLangChainMessage(message));
}
