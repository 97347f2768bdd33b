import type {
  ContentBlock,
  DocumentBlock,
  ImageBlock,
  Message,
  TextBlock,
  ToolResultBlock,
  ToolResultContentBlock,
} from "@unforget/core";
import type { ModelMessage } from "ai";
import { isRecord } from "./is-record.ts";
import {
  AI_SDK_PARTS,
  DENIED_TOOL_RESULT,
  giveOptions,
  MESSAGE_FLAGS,
  type MessageStash,
  mediaTypeOf,
  mediaValue,
  OPAQUE_MESSAGE,
  OUTPUT_ITEM_DATA,
  type Part,
  type PartStash,
  type Report,
  stashOf,
} from "./model-message-parts.ts";

function encodeText(block: TextBlock, stash: PartStash): Part {
  const part: Part = { ...stash.extra, type: "text", text: block.text };
  const options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
  if (options !== undefined) part.providerOptions = options;
  return part;
}

function encodeMediaPart(block: ImageBlock | DocumentBlock, stash: PartStash): Part {
  const mediaType = mediaTypeOf(block, stash);
  let part: Part;
  if (stash.part === "image") {
    part = { ...stash.extra, type: "image", image: mediaValue(block, stash, false) };
    if (mediaType !== undefined) part.mediaType = mediaType;
  } else {
    part = {
      ...stash.extra,
      type: "file",
      data: mediaValue(block, stash, stash.tagged === true),
      mediaType: mediaType ?? "application/octet-stream",
    };
    if (stash.filename !== undefined) part.filename = stash.filename;
  }
  const options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
  if (options !== undefined) part.providerOptions = options;
  return part;
}

/** Tool output items that must name a media type. */
const ITEM_NEEDS_MEDIA_TYPE = new Set(["file", "media", "file-data", "image-data"]);

function encodeOutputItem(block: ToolResultContentBlock): Record<string, unknown> {
  const stash = stashOf(block);
  if (block.type === "text") {
    if (stash.extra && "item" in stash.extra) return stash.extra.item as Record<string, unknown>;
    const item: Record<string, unknown> = { ...stash.extra, type: "text", text: block.text };
    const options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
    if (options !== undefined) item.providerOptions = options;
    return item;
  }
  const kind = block.source.type;
  const prefix = block.type === "image" ? "image" : "file";
  const type =
    stash.part ?? (kind === "url" ? `${prefix}-url` : kind === "file" ? `${prefix}-id` : `${prefix}-data`);
  const field = OUTPUT_ITEM_DATA[type] ?? "data";
  const item: Record<string, unknown> = {
    ...stash.extra,
    type,
    [field]: mediaValue(block, stash, type === "file"),
  };
  if (field === "fileId" && stash.part === undefined && block.source.type === "file")
    item.fileId = block.source.file_id;
  const mediaType = mediaTypeOf(block, stash);
  if (mediaType !== undefined && (stash.mediaType !== undefined || ITEM_NEEDS_MEDIA_TYPE.has(type)))
    item.mediaType = mediaType;
  if (stash.filename !== undefined) item.filename = stash.filename;
  const options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
  if (options !== undefined) item.providerOptions = options;
  return item;
}

function encodeToolResult(block: ToolResultBlock, toolNames: ReadonlyMap<string, string>): Part {
  const stash = stashOf(block);
  let output: Record<string, unknown>;
  const text = typeof block.content === "string" ? block.content : undefined;
  if (text !== undefined) {
    output = { type: block.is_error ? "error-text" : "text", value: text };
    if (stash.output === "json" || stash.output === "error-json") {
      try {
        output = { type: block.is_error ? "error-json" : "json", value: JSON.parse(text) };
      } catch {
        // A layer replaced the JSON with text (a cleared result, a preview): it goes back as text.
      }
    } else if (stash.output === "execution-denied" && block.is_error) {
      if (stash.reason) output = { type: "execution-denied", reason: text };
      else if (text === DENIED_TOOL_RESULT) output = { type: "execution-denied" };
    }
  } else {
    output = { type: "content", value: (block.content as ToolResultContentBlock[]).map(encodeOutputItem) };
  }
  if (stash.extra && "output" in stash.extra && text === JSON.stringify(stash.extra.output)) {
    output = stash.extra.output as Record<string, unknown>;
  } else {
    output = { ...stash.outputExtra, ...output };
    if (stash.outputProviderOptions !== undefined) output.providerOptions = stash.outputProviderOptions;
  }
  const { output: _output, ...extra } = stash.extra ?? {};
  const part: Part = {
    ...extra,
    type: "tool-result",
    toolCallId: block.tool_use_id,
    toolName: stash.toolName ?? toolNames.get(block.tool_use_id) ?? "unknown",
    output,
  };
  let options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
  // The AI SDK has no error flag on rich tool output: it travels beside the block's other Unforget-only fields.
  if (block.is_error && text === undefined)
    options = { ...options, unforget: { ...options?.unforget, isError: true } };
  if (options !== undefined) part.providerOptions = options;
  return part;
}

function encodeBlock(
  block: ContentBlock,
  role: "user" | "assistant",
  toolNames: ReadonlyMap<string, string>,
  report: Report,
): Part {
  const stash = stashOf(block);
  switch (block.type) {
    case "text":
      return encodeText(block, stash);
    case "image":
    case "document":
      return encodeMediaPart(block, stash);
    case "thinking": {
      if (role === "user") break;
      const part: Part = { ...stash.extra, type: "reasoning", text: block.thinking };
      const options = giveOptions(stash.providerOptions, block, "signature", block.signature);
      if (options !== undefined) part.providerOptions = options;
      return part;
    }
    case "redacted_thinking": {
      if (role === "user") break;
      return {
        ...stash.extra,
        type: "reasoning",
        text: stash.text ?? "",
        providerOptions: giveOptions(stash.providerOptions, block, "redactedData", block.data)!,
      };
    }
    case "tool_use": {
      const part: Part = {
        ...stash.extra,
        type: "tool-call",
        toolCallId: block.id,
        toolName: block.name,
        input: block.input,
      };
      const options = giveOptions(stash.providerOptions, block, "cacheControl", block.cache_control);
      if (options !== undefined) part.providerOptions = options;
      return part;
    }
    case "tool_result":
      return encodeToolResult(block, toolNames);
    case "unknown": {
      if (stash.verbatim || AI_SDK_PARTS.has(block.original.type)) return block.original;
      // A block from elsewhere (an Anthropic server tool block in a resumed transcript): a placeholder the
      // model can read, carrying the block so that it comes back whole.
      report(
        `Unforget block ${block.original.type}`,
        `an Unforget block of type ${block.original.type} has no AI SDK part; it was sent as the text "[${block.original.type}]"`,
      );
      return {
        type: "text",
        text: `[${block.original.type}]`,
        providerOptions: { unforget: { unknown: block.original } },
      };
    }
  }
  report(
    `${block.type} block in a user message`,
    `a ${block.type} block in a user message has no AI SDK part; it was sent as text`,
  );
  return { type: "text", text: block.type === "thinking" ? block.thinking : "[redacted thinking]" };
}

const isToolPart = (part: Part) => part.type === "tool-result" || part.type === "tool-approval-response";

/**
 * An Unforget message as AI SDK messages: one, or two when a user message holds tool results and other
 * content (the results go first, in a tool message). `toolNames` names the tools of results that carry no name.
 */
export function encodeModelMessage(
  message: Message,
  report: Report = () => {},
  toolNames: ReadonlyMap<string, string> = new Map(),
): ModelMessage[] {
  const stash = (isRecord(message.metadata?.aiSdk) ? message.metadata.aiSdk : {}) as MessageStash;
  const only = message.content.length === 1 ? message.content[0] : undefined;
  if (only?.type === "unknown" && only.original.type === OPAQUE_MESSAGE)
    return [only.original.message as ModelMessage];
  const flags = Object.fromEntries(
    MESSAGE_FLAGS.filter(
      (flag) => message[flag] === true && !(flag === "isMeta" && stash.role === "system"),
    ).map((flag) => [flag, true]),
  );
  const envelope = (role: string, content: unknown): ModelMessage => {
    const result: Record<string, unknown> = { ...stash.extra, role, content };
    const options =
      Object.keys(flags).length > 0 ? { ...stash.providerOptions, unforget: flags } : stash.providerOptions;
    if (options !== undefined) result.providerOptions = options;
    return result as ModelMessage;
  };
  const plainText =
    only?.type === "text" &&
    only.cache_control === undefined &&
    stashOf(only).providerOptions === undefined &&
    stashOf(only).extra === undefined
      ? only.text
      : undefined;
  if (stash.role === "system") {
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
    return [envelope("system", text)];
  }
  const parts = message.content.map((block) => encodeBlock(block, message.role, toolNames, report));
  if (message.role === "assistant") {
    return [envelope("assistant", stash.text && plainText !== undefined ? plainText : parts)];
  }
  const toolParts = parts.filter(isToolPart);
  const userParts = parts.filter((part) => !isToolPart(part));
  if (toolParts.length === 0 && stash.role !== "tool") {
    return [envelope("user", stash.text && plainText !== undefined ? plainText : userParts)];
  }
  const out: ModelMessage[] = [envelope("tool", toolParts)];
  if (userParts.length > 0) {
    const user: Record<string, unknown> = { role: "user", content: userParts };
    out.push(user as ModelMessage);
  }
  return out;
}

/**
 * AI SDK messages (`ModelMessage[]`) as Unforget messages, losing nothing: text, tool calls and results
 * (errors, JSON, denials, rich content), images and files, reasoning with its signatures, provider options
 * (Anthropic cache control becomes `cache_control`). What this version does not model is kept as it is.
 */
