import {
  type ContentBlock,
  type DocumentBlock,
  type ImageBlock,
  type MediaSource,
  normalizeContentBlock,
  type TextBlock,
  type ToolResultContentBlock,
  type ToolUseBlock,
} from "@unforget/core";
import { isRecord } from "./is-record.ts";

import {
  type Block,
  DATA_URL,
  type LangChainBlockStash,
  MEDIA_FIELDS,
  mediaFields,
  OPAQUE_BLOCKS,
  omit,
  opaque,
  type Report,
  standardSource,
  stashOf,
  withoutStash,
  withStash,
} from "./langchain-parts.ts";

/** One LangChain content block as an Unforget block (an Unforget-shaped block is taken as it is). */
export function decodeBlock(block: unknown, role: string, report: Report): ContentBlock {
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
export function encodeBlock(block: ContentBlock | ToolResultContentBlock): Block {
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

/** Tool result content: a string, or text, image and document blocks (anything else a placeholder carrying it). */
export function decodeToolContent(content: unknown, report: Report): string | ToolResultContentBlock[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((item): ToolResultContentBlock => {
    const block = decodeBlock(item, "tool", report);
    if (block.type === "text" || block.type === "image" || block.type === "document") return block;
    const type = block.type === "unknown" ? block.original.type : block.type;
    return withStash<TextBlock>({ type: "text", text: `[${type}]` }, { verbatim: true, extra: { item } });
  });
}

export function encodeToolContent(content: string | ToolResultContentBlock[]): string | Block[] {
  if (typeof content === "string") return content;
  return content.map((block) => {
    const stash = stashOf(block);
    if (block.type === "text" && stash.verbatim && isRecord(stash.extra?.item))
      return stash.extra.item as Block;
    return encodeBlock(block);
  });
}
