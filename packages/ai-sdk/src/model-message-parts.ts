import type {
  CacheControl,
  ContentBlock,
  DocumentBlock,
  ImageBlock,
  ToolResultContentBlock,
  UnknownBlock,
} from "@unforget/core";
import { isRecord } from "./is-record.ts";
import { type DataKind, decodeMedia, encodeMedia } from "./media.ts";

export type Part = { type: string; [key: string]: unknown };
export type ProviderOptions = Record<string, Record<string, unknown>>;

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

export type Report = (shape: string, detail: string) => void;

/** The result a denial sends when it gave no reason. */
export const DENIED_TOOL_RESULT = "The user denied this tool call.";

export const OPAQUE_MESSAGE = "ai-sdk-message";
/** Unforget's marks on a message, carried in the message's `providerOptions.unforget` (providers ignore it). */
export const MESSAGE_FLAGS = ["isMeta", "isObservation", "isCompactSummary"] as const;
/** Parts the AI SDK defines that Unforget keeps as they are (they travel with their message). */
export const OPAQUE_PARTS = new Set([
  "tool-approval-request",
  "tool-approval-response",
  "custom",
  "reasoning-file",
  "source",
]);
const TAGGED = new Set(["data", "url", "reference", "text"]);
/** Every part type of the AI SDK's messages (an unknown block of another type is not one). */
export const AI_SDK_PARTS = new Set([
  "text",
  "image",
  "file",
  "reasoning",
  "tool-call",
  "tool-result",
  ...OPAQUE_PARTS,
]);

export function pick(
  part: Record<string, unknown>,
  known: readonly string[],
): Record<string, unknown> | undefined {
  let extra: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(part)) {
    if (known.includes(key)) continue;
    extra ??= {};
    extra[key] = value;
  }
  return extra;
}

export function isCacheControl(value: unknown): value is CacheControl {
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
export function takeOptions<T>(
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
export function withExtras<B extends ContentBlock | ToolResultContentBlock>(
  block: B,
  extras: Record<string, unknown> | undefined,
): B {
  if (extras === undefined) return block;
  for (const [key, value] of Object.entries(extras))
    if (!NATIVE_KEYS.has(key)) Object.assign(block, { [key]: value });
  return block;
}

/** The provider options of a rebuilt part: the stash's, the Anthropic field, and the block's Unforget-only fields. */
export function giveOptions(
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

export const isString = (value: unknown): value is string => typeof value === "string";

export function withStash<B extends ContentBlock>(block: B, stash: PartStash): B {
  const kept = Object.fromEntries(Object.entries(stash).filter(([, value]) => value !== undefined));
  return Object.keys(kept).length > 0 ? ({ ...block, aiSdk: kept } as B) : block;
}

/** The stash a block carries, when it came from an AI SDK part. */
export function stashOf(block: ContentBlock | ToolResultContentBlock): PartStash {
  const stash = (block as { aiSdk?: unknown }).aiSdk;
  return isRecord(stash) ? (stash as PartStash) : {};
}

export function opaque(part: unknown): UnknownBlock {
  const original = isRecord(part) && typeof part.type === "string" ? part : { type: "invalid", value: part };
  return withStash<UnknownBlock>(
    { type: "unknown", original: original as UnknownBlock["original"] },
    { verbatim: true },
  );
}

/** Where each tool output item keeps its bytes or address. */
export const OUTPUT_ITEM_DATA: Record<string, string> = {
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
export function mediaBlock(
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
export function mediaValue(block: ImageBlock | DocumentBlock, stash: PartStash, tagged: boolean): unknown {
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
export function mediaTypeOf(block: ImageBlock | DocumentBlock, stash: PartStash): string | undefined {
  if (stash.mediaType === null) return undefined;
  if (stash.mediaType !== undefined) return stash.mediaType;
  if (block.source.type === "base64" || block.source.type === "text") return block.source.media_type;
  return block.type === "image" ? "image/*" : "application/pdf";
}
