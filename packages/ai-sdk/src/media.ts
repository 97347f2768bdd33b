import type { MediaSource } from "@unforget/core";

/** How the AI SDK gave a file's bytes or address, so that the same kind of value goes back. */
export type DataKind =
  | "base64"
  | "Uint8Array"
  | "Buffer"
  | "ArrayBuffer"
  | "URL"
  | "url-string"
  | "reference"
  /** A file id given as a plain string (a tool output's `fileId`). */
  | "id"
  /** Inline text (the tagged `{ type: "text", text }`). */
  | "text";

/** A media value of the AI SDK as an Unforget source, and what it takes to give the same value back. */
export interface DecodedMedia {
  source: MediaSource;
  kind: DataKind;
  /** The provider reference record, when the value was one (`{ anthropic: "file_…" }`). */
  reference?: Record<string, string>;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** True for a provider reference: a plain record of provider name → file id. */
export function isProviderReference(value: unknown): value is Record<string, string> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  if (value instanceof URL || value instanceof Uint8Array || value instanceof ArrayBuffer) return false;
  const entries = Object.entries(value);
  return entries.length > 0 && entries.every(([, id]) => typeof id === "string");
}

/**
 * An AI SDK data value (base64 string, bytes, URL, URL string, provider reference) as a media source. Returns
 * undefined for anything else, which the caller keeps as an opaque block.
 */
export function decodeMedia(data: unknown, mediaType: string): DecodedMedia | undefined {
  const type = mediaType;
  if (typeof data === "string") {
    if (SCHEME.test(data)) return { source: { type: "url", url: data }, kind: "url-string" };
    return { source: { type: "base64", media_type: type, data }, kind: "base64" };
  }
  if (data instanceof URL) return { source: { type: "url", url: data.href }, kind: "URL" };
  if (data instanceof Uint8Array) {
    const kind: DataKind = Buffer.isBuffer(data) ? "Buffer" : "Uint8Array";
    return { source: { type: "base64", media_type: type, data: toBase64(data) }, kind };
  }
  if (data instanceof ArrayBuffer) {
    return {
      source: { type: "base64", media_type: type, data: toBase64(new Uint8Array(data)) },
      kind: "ArrayBuffer",
    };
  }
  if (isProviderReference(data)) {
    const first = Object.values(data)[0]!;
    return { source: { type: "file", file_id: first }, kind: "reference", reference: data };
  }
  return undefined;
}

/** The AI SDK value for a media source, of the kind it came as (the source's own kind when unknown). */
export function encodeMedia(
  source: MediaSource,
  kind: DataKind | undefined,
  reference: Record<string, string> | undefined,
): unknown {
  switch (source.type) {
    case "base64": {
      if (kind === "Uint8Array") return new Uint8Array(Buffer.from(source.data, "base64"));
      if (kind === "Buffer") return Buffer.from(source.data, "base64");
      if (kind === "ArrayBuffer") {
        const bytes = Buffer.from(source.data, "base64");
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      }
      return source.data;
    }
    case "url":
      return kind === "URL" ? new URL(source.url) : source.url;
    case "file":
      if (kind === "id") return source.file_id;
      return reference && Object.values(reference)[0] === source.file_id
        ? reference
        : { anthropic: source.file_id };
    case "text":
      return kind === "text" ? source.data : Buffer.from(source.data).toString("base64");
  }
}
