import {
  type CacheControl,
  type ContentBlock,
  createMessage,
  type DocumentBlock,
  type ImageBlock,
  type Message,
  type TextBlock,
  type ToolResultBlock,
  type ToolResultContentBlock,
  type UnknownBlock,
} from "@unforget/core";
import type { ModelMessage } from "ai";
import { isRecord } from "./is-record.ts";
import { type DataKind, decodeMedia, encodeMedia } from "./media.ts";

type Part = { type: string; [key: string]: unknown };
type ProviderOptions = Record<string, Record<string, unknown>>;

/**
 * What an AI SDK part carried that its Unforget block has no field for, kept on the block (`aiSdk`) so that the
 * same part can be rebuilt. The block's own fields always win: a block a layer changed goes back changed.
 */
export interface PartStash {
  /** The part's provider options, less what moved to a block field (Anthropic cache control, signatures). */
  providerOptions?: ProviderOptions;
  /** Fields of the part this version does not model, verbatim. */
  extra?: Record<string, unknown>;
  /** The part's type when the block does not tell it ("image" or "file", a tool output item's type). */
  part?: string;
  /** The media type as the part gave it (absent when it gave none). */
  mediaType?: string | null;
  filename?: string;
  /** How the bytes or address were given, and whether inside the tagged `{ type, data }` shape. */
  kind?: DataKind;
  tagged?: boolean;
  reference?: Record<string, string>;
  /** For a tool result: the tool's name, and the output's type when the content does not tell it. */
  toolName?: string;
  output?: "json" | "error-json" | "execution-denied" | "content";
  /** For a denial: whether the part gave a reason (the content is the reason, or a stock sentence). */
  reason?: boolean;
  outputProviderOptions?: ProviderOptions;
  outputExtra?: Record<string, unknown>;
  /** For reasoning: the text of a redacted reasoning part. */
  text?: string;
  /** The block is an AI SDK part kept as it is (an unknown block's original goes back verbatim). */
  verbatim?: boolean;
}

/** What an AI SDK message carried that an Unforget message has no field for (`metadata.aiSdk`). */
export interface MessageStash {
  /** The AI SDK role, when the Unforget role does not tell it ("system", "tool"). */
  role?: "system" | "tool";
  /** The content was a string, not a list of parts. */
  text?: boolean;
  providerOptions?: ProviderOptions;
  extra?: Record<string, unknown>;
}

export interface ConvertOptions {
  /** Called for a message or part shape this version does not model; the shape is kept as it is either way. */
  onUnknownShape?: (shape: string, detail: string) => void;
}

type Report = (shape: string, detail: string) => void;

/** The result a denial sends when it gave no reason. */
export const DENIED_TOOL_RESULT = "The user denied this tool call.";

const OPAQUE_MESSAGE = "ai-sdk-message";
/** Unforget's marks on a message, carried in the message's `providerOptions.unforget` (providers ignore it). */
const MESSAGE_FLAGS = ["isMeta", "isObservation", "isCompactSummary"] as const;
/** Parts the AI SDK defines that Unforget keeps as they are (they travel with their message). */
const OPAQUE_PARTS = new Set([
  "tool-approval-request",
  "tool-approval-response",
  "custom",
  "reasoning-file",
  "source",
]);
const TAGGED = new Set(["data", "url", "reference", "text"]);
/** Every part type of the AI SDK's messages (an unknown block of another type is not one). */
const AI_SDK_PARTS = new Set([
  "text",
  "image",
  "file",
  "reasoning",
  "tool-call",
  "tool-result",
  ...OPAQUE_PARTS,
]);

function pick(part: Record<string, unknown>, known: readonly string[]): Record<string, unknown> | undefined {
  let extra: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(part)) {
    if (known.includes(key)) continue;
    extra ??= {};
    extra[key] = value;
  }
  return extra;
}

function isCacheControl(value: unknown): value is CacheControl {
  if (!isRecord(value) || value.type !== "ephemeral") return false;
  const keys = Object.keys(value);
  return (
    keys.every((key) => key === "type" || key === "ttl") &&
    (value.ttl === undefined || value.ttl === "5m" || value.ttl === "1h")
  );
}

/** Fields of Unforget blocks that the conversion maps itself; any other field travels in `providerOptions.unforget`. */
const NATIVE_KEYS = new Set([
  "type",
  "text",
  "cache_control",
  "source",
  "tool_use_id",
  "content",
  "is_error",
  "id",
  "name",
  "input",
  "thinking",
  "signature",
  "data",
  "original",
  "aiSdk",
]);

interface TakenOptions<T> {
  /** The value of the Anthropic field that has a block field (`cache_control`, `signature`, …). */
  value?: T;
  /** Unforget block fields that have no AI SDK field (image sizes, citations, …), from `providerOptions.unforget`. */
  extras?: Record<string, unknown>;
  /** Everything else, kept in the stash. */
  rest?: ProviderOptions;
}

/**
 * Splits a part's provider options: `unforget` (the Unforget-only fields of a block written by
 * `toModelMessages`), the Anthropic field with a block field of its own when `accept` takes it, and the rest.
 */
function takeOptions<T>(
  options: unknown,
  field?: string,
  accept?: (value: unknown) => value is T,
): TakenOptions<T> {
  if (options === undefined) return {};
  if (!isRecord(options)) return { rest: options as ProviderOptions };
  const taken: TakenOptions<T> = {};
  let rest: Record<string, unknown> = options;
  if (isRecord(rest.unforget) && Object.keys(rest.unforget).length > 0) {
    const { unforget, ...others } = rest;
    taken.extras = unforget as Record<string, unknown>;
    rest = others;
  }
  const anthropic = rest.anthropic;
  if (field !== undefined && accept !== undefined && isRecord(anthropic) && accept(anthropic[field])) {
    const { [field]: value, ...anthropicRest } = anthropic;
    const { anthropic: _taken, ...others } = rest;
    rest = Object.keys(anthropicRest).length > 0 ? { ...others, anthropic: anthropicRest } : others;
    taken.value = value as T;
  }
  // What is left stays; so does an empty object given as it is (nothing was taken from it).
  if (Object.keys(rest).length > 0 || (taken.value === undefined && taken.extras === undefined))
    taken.rest = rest as ProviderOptions;
  return taken;
}

/** Puts the Unforget-only fields of a block into its part (`unforget` provider options; providers ignore it). */
function withExtras<B extends ContentBlock | ToolResultContentBlock>(
  block: B,
  extras: Record<string, unknown> | undefined,
): B {
  if (extras === undefined) return block;
  for (const [key, value] of Object.entries(extras))
    if (!NATIVE_KEYS.has(key)) (block as unknown as Record<string, unknown>)[key] = value;
  return block;
}

/** The provider options of a rebuilt part: the stash's, the Anthropic field, and the block's Unforget-only fields. */
function giveOptions(
  options: ProviderOptions | undefined,
  block: ContentBlock | ToolResultContentBlock,
  field?: string,
  value?: unknown,
): ProviderOptions | undefined {
  let out = options;
  if (field !== undefined && value !== undefined)
    out = { ...out, anthropic: { ...out?.anthropic, [field]: value } };
  let extras: Record<string, unknown> | undefined;
  for (const [key, entry] of Object.entries(block)) {
    if (NATIVE_KEYS.has(key) || entry === undefined) continue;
    extras ??= {};
    extras[key] = entry;
  }
  return extras ? { ...out, unforget: extras } : out;
}

const isString = (value: unknown): value is string => typeof value === "string";

function withStash<B extends ContentBlock>(block: B, stash: PartStash): B {
  const kept = Object.fromEntries(Object.entries(stash).filter(([, value]) => value !== undefined));
  return Object.keys(kept).length > 0 ? ({ ...block, aiSdk: kept } as B) : block;
}

/** The stash a block carries, when it came from an AI SDK part. */
export function stashOf(block: ContentBlock | ToolResultContentBlock): PartStash {
  const stash = (block as { aiSdk?: unknown }).aiSdk;
  return isRecord(stash) ? (stash as PartStash) : {};
}

function opaque(part: unknown): UnknownBlock {
  const original = isRecord(part) && typeof part.type === "string" ? part : { type: "invalid", value: part };
  return withStash<UnknownBlock>(
    { type: "unknown", original: original as UnknownBlock["original"] },
    { verbatim: true },
  );
}

/** Where each tool output item keeps its bytes or address. */
const OUTPUT_ITEM_DATA: Record<string, string> = {
  file: "data",
  media: "data",
  "file-data": "data",
  "image-data": "data",
  "file-url": "url",
  "image-url": "url",
  "file-id": "fileId",
  "image-file-id": "fileId",
  "file-reference": "providerReference",
};

/** An image or document block from an AI SDK data value (bare or tagged); undefined when the value is unreadable. */
function mediaBlock(
  data: unknown,
  mediaType: string | undefined,
  image: boolean,
  stash: PartStash,
): ImageBlock | DocumentBlock | undefined {
  let decoded: ReturnType<typeof decodeMedia>;
  let tagged = false;
  if (isRecord(data) && typeof data.type === "string" && TAGGED.has(data.type)) {
    tagged = true;
    decoded =
      data.type === "text"
        ? typeof data.text === "string"
          ? { source: { type: "text", media_type: "text/plain", data: data.text }, kind: "text" }
          : undefined
        : decodeMedia(
            data.type === "data" ? data.data : data.type === "url" ? data.url : data.reference,
            mediaType ?? "application/octet-stream",
          );
  } else {
    decoded = decodeMedia(data, mediaType ?? (image ? "image/*" : "application/octet-stream"));
  }
  if (!decoded) return undefined;
  const full: PartStash = {
    ...stash,
    mediaType: mediaType ?? null,
    kind: decoded.kind,
    ...(tagged ? { tagged: true } : {}),
    ...(decoded.reference ? { reference: decoded.reference } : {}),
  };
  const isImage = mediaType === undefined ? image : mediaType.startsWith("image");
  return isImage
    ? withStash<ImageBlock>({ type: "image", source: decoded.source }, full)
    : withStash<DocumentBlock>({ type: "document", source: decoded.source }, full);
}

/** The AI SDK value of a media block, in the shape (bare or tagged) and kind it came in. */
function mediaValue(block: ImageBlock | DocumentBlock, stash: PartStash, tagged: boolean): unknown {
  const value = encodeMedia(block.source, stash.kind, stash.reference);
  if (!tagged) return value;
  switch (block.source.type) {
    case "url":
      return { type: "url", url: value instanceof URL ? value : new URL(String(value)) };
    case "file":
      return { type: "reference", reference: value };
    case "text":
      return { type: "text", text: block.source.data };
    default:
      return { type: "data", data: value };
  }
}

/** The media type to give back: the part's own (none when it gave none), else the source's. */
function mediaTypeOf(block: ImageBlock | DocumentBlock, stash: PartStash): string | undefined {
  if (stash.mediaType === null) return undefined;
  if (stash.mediaType !== undefined) return stash.mediaType;
  if (block.source.type === "base64" || block.source.type === "text") return block.source.media_type;
  return block.type === "image" ? "image/*" : "application/pdf";
}

function decodeText(part: Part): ContentBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  // An Unforget block the AI SDK has no part for travelled as a placeholder text: it comes back whole.
  if (isRecord(extras?.unknown) && typeof extras.unknown.type === "string")
    return { type: "unknown", original: extras.unknown as UnknownBlock["original"] };
  const block: TextBlock = { type: "text", text: String(part.text) };
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, extras), {
    providerOptions: rest,
    extra: pick(part, ["type", "text", "providerOptions"]),
  });
}

function decodeMediaPart(part: Part, report: Report, role: string): ContentBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const isImage = part.type === "image";
  const stash: PartStash = {
    part: part.type,
    providerOptions: rest,
    extra: pick(part, ["type", isImage ? "image" : "data", "mediaType", "filename", "providerOptions"]),
    ...(typeof part.filename === "string" ? { filename: part.filename } : {}),
  };
  const mediaType = typeof part.mediaType === "string" ? part.mediaType : undefined;
  const block = mediaBlock(isImage ? part.image : part.data, mediaType, isImage, stash);
  if (!block) {
    report(
      `${role} part ${part.type} with unreadable data`,
      `a ${part.type} part whose data is neither bytes, base64, a URL nor a provider reference was kept as it is`,
    );
    return opaque(part);
  }
  if (cache) block.cache_control = cache;
  return withExtras(block, extras);
}

function decodeReasoning(part: Part): ContentBlock {
  const extra = pick(part, ["type", "text", "providerOptions"]);
  const redacted = takeOptions(part.providerOptions, "redactedData", isString);
  if (redacted.value !== undefined) {
    return withStash(withExtras({ type: "redacted_thinking", data: redacted.value }, redacted.extras), {
      providerOptions: redacted.rest,
      extra,
      ...(part.text ? { text: String(part.text) } : {}),
    });
  }
  const { value: signature, extras, rest } = takeOptions(part.providerOptions, "signature", isString);
  const block: ContentBlock = { type: "thinking", thinking: String(part.text) };
  if (signature !== undefined) block.signature = signature;
  return withStash(withExtras(block, extras), { providerOptions: rest, extra });
}

function decodeToolCall(part: Part): ContentBlock {
  if (part.providerExecuted === true) return opaque(part);
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const block: ContentBlock = {
    type: "tool_use",
    id: String(part.toolCallId),
    name: String(part.toolName),
    input: part.input,
  };
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, extras), {
    providerOptions: rest,
    extra: pick(part, ["type", "toolCallId", "toolName", "input", "providerOptions"]),
  });
}

/** One item of a `content` tool output as a tool-result block. */
function decodeOutputItem(item: unknown, report: Report): ToolResultContentBlock {
  if (!isRecord(item) || typeof item.type !== "string") {
    report("tool output item without a type", "a tool output item without a type was kept as it is");
    return withStash<TextBlock>({ type: "text", text: "[unreadable tool output item]" }, { extra: { item } });
  }
  const {
    value: cache,
    extras,
    rest: providerOptions,
  } = takeOptions(item.providerOptions, "cacheControl", isCacheControl);
  const finish = <B extends ToolResultContentBlock>(block: B): B => {
    if (cache) block.cache_control = cache;
    return withExtras(block, extras);
  };
  switch (item.type) {
    case "text":
      return finish(
        withStash<TextBlock>(
          { type: "text", text: String(item.text) },
          { providerOptions, extra: pick(item, ["type", "text", "providerOptions"]) },
        ),
      );
    default: {
      const field = OUTPUT_ITEM_DATA[item.type];
      if (field === undefined) break;
      const stash: PartStash = {
        part: item.type,
        providerOptions,
        extra: pick(item, ["type", field, "mediaType", "filename", "providerOptions"]),
        ...(typeof item.filename === "string" ? { filename: item.filename } : {}),
      };
      const mediaType = typeof item.mediaType === "string" ? item.mediaType : undefined;
      const image = item.type.startsWith("image");
      const block =
        field === "fileId" && typeof item.fileId === "string"
          ? withStash<DocumentBlock | ImageBlock>(
              image
                ? { type: "image", source: { type: "file", file_id: item.fileId } }
                : { type: "document", source: { type: "file", file_id: item.fileId } },
              { ...stash, kind: "id", mediaType: mediaType ?? null },
            )
          : mediaBlock(item[field], mediaType, image, stash);
      if (block) return finish(block);
    }
  }
  report(
    `tool output item ${item.type}`,
    `a tool output item of type ${item.type} was kept as it is and shown to the ladder as "[${item.type}]"`,
  );
  return withStash<TextBlock>({ type: "text", text: `[${item.type}]` }, { extra: { item } });
}

function decodeToolResult(part: Part, report: Report): ToolResultBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const output = isRecord(part.output) ? part.output : { type: "json", value: part.output ?? null };
  const stash: PartStash = {
    toolName: String(part.toolName),
    providerOptions: rest,
    extra: pick(part, ["type", "toolCallId", "toolName", "output", "providerOptions"]),
    outputProviderOptions: output.providerOptions as ProviderOptions | undefined,
  };
  const block: ToolResultBlock = { type: "tool_result", tool_use_id: String(part.toolCallId), content: "" };
  switch (output.type) {
    case "text":
    case "error-text":
      block.content = String(output.value);
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    case "json":
    case "error-json":
      block.content = JSON.stringify(output.value ?? null);
      stash.output = output.type;
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    case "execution-denied":
      block.content = typeof output.reason === "string" ? output.reason : DENIED_TOOL_RESULT;
      stash.output = "execution-denied";
      stash.reason = typeof output.reason === "string";
      stash.outputExtra = pick(output, ["type", "reason", "providerOptions"]);
      break;
    case "content":
      block.content = Array.isArray(output.value)
        ? output.value.map((item) => decodeOutputItem(item, report))
        : [];
      stash.output = "content";
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    default:
      report(
        `tool output ${String(output.type)}`,
        `a tool output of type ${String(output.type)} was kept as it is`,
      );
      block.content = JSON.stringify(output);
      stash.extra = { ...stash.extra, output };
  }
  const { isError, ...blockExtras } = extras ?? {};
  if (
    output.type === "error-text" ||
    output.type === "error-json" ||
    output.type === "execution-denied" ||
    (output.type === "content" && isError === true)
  )
    block.is_error = true;
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, blockExtras), stash);
}

function decodePart(part: unknown, role: string, report: Report): ContentBlock {
  if (!isRecord(part) || typeof part.type !== "string") {
    report(`${role} part without a type`, `a ${role} part without a type was kept as it is`);
    return opaque(part);
  }
  const typed = part as Part;
  switch (typed.type) {
    case "text":
      if (typeof typed.text === "string") return decodeText(typed);
      break;
    case "image":
    case "file":
      return decodeMediaPart(typed, report, role);
    case "reasoning":
      if (typeof typed.text === "string") return decodeReasoning(typed);
      break;
    case "tool-call":
      if (typeof typed.toolCallId === "string" && typeof typed.toolName === "string")
        return decodeToolCall(typed);
      break;
    case "tool-result":
      // A result in an assistant message is a provider-executed tool's: it travels with its call, opaque.
      if (role === "tool" && typeof typed.toolCallId === "string") return decodeToolResult(typed, report);
      if (role === "assistant") return opaque(typed);
      break;
    default:
      if (OPAQUE_PARTS.has(typed.type)) return opaque(typed);
  }
  report(`${role} part ${typed.type}`, `a ${role} message part of type ${typed.type} was kept as it is`);
  return opaque(typed);
}

/** One AI SDK message as an Unforget message (a fresh id; the stash in `metadata.aiSdk` and on the blocks). */
export function decodeModelMessage(message: ModelMessage, report: Report = () => {}): Message {
  const raw = message as unknown;
  const role = isRecord(raw) ? raw.role : undefined;
  const content = isRecord(raw) ? raw.content : undefined;
  const known = role === "system" || role === "user" || role === "assistant" || role === "tool";
  const wellFormed =
    known && (typeof content === "string" ? role !== "tool" : Array.isArray(content) && role !== "system");
  if (!isRecord(raw) || !wellFormed) {
    const shape = known
      ? `${String(role)} message with content ${typeof content}`
      : `message role ${String(role)}`;
    report(shape, `a ${shape} was kept as it is`);
    return createMessage("user", [{ type: "unknown", original: { type: OPAQUE_MESSAGE, message: raw } }], {
      isMeta: true,
    });
  }
  const stash: MessageStash = {};
  if (role === "system" || role === "tool") stash.role = role;
  const options = takeOptions(raw.providerOptions);
  if (options.rest !== undefined) stash.providerOptions = options.rest;
  const extra = pick(raw, ["role", "content", "providerOptions"]);
  if (extra) stash.extra = extra;
  let blocks: ContentBlock[];
  if (typeof content === "string") {
    stash.text = true;
    blocks = [{ type: "text", text: content }];
  } else {
    blocks = (content as unknown[]).map((part) => decodePart(part, role, report));
  }
  const init: Parameters<typeof createMessage>[2] = {
    ...(Object.keys(stash).length > 0 ? { metadata: { aiSdk: stash } } : {}),
    ...(role === "system" ? { isMeta: true } : {}),
  };
  // What only Unforget marks on a message (a meta message, an observation, a summary) came in `unforget`.
  for (const flag of MESSAGE_FLAGS) if (options.extras?.[flag] === true) init[flag] = true;
  return createMessage(role === "assistant" ? "assistant" : "user", blocks, init);
}

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
    return result as unknown as ModelMessage;
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
    out.push(user as unknown as ModelMessage);
  }
  return out;
}

/**
 * AI SDK messages (`ModelMessage[]`) as Unforget messages, losing nothing: text, tool calls and results
 * (errors, JSON, denials, rich content), images and files, reasoning with its signatures, provider options
 * (Anthropic cache control becomes `cache_control`). What this version does not model is kept as it is.
 */
export function fromModelMessages(
  messages: readonly ModelMessage[],
  options: ConvertOptions = {},
): Message[] {
  const report = options.onUnknownShape ?? (() => {});
  return messages.map((message) => decodeModelMessage(message, report));
}

/**
 * Unforget messages as AI SDK messages: the inverse of `fromModelMessages` (its messages come back equal), and
 * for any other Unforget messages (a summary, a cleared result) the AI SDK parts that carry them.
 */
export function toModelMessages(messages: readonly Message[], options: ConvertOptions = {}): ModelMessage[] {
  const report = options.onUnknownShape ?? (() => {});
  const toolNames = new Map<string, string>();
  for (const message of messages)
    for (const block of message.content) if (block.type === "tool_use") toolNames.set(block.id, block.name);
  return messages.flatMap((message) => encodeModelMessage(message, report, toolNames));
}
