import { createHash } from "node:crypto";
import type { ContentBlock, ModelStreamEvent, StopReason, Usage } from "@unforget/core";
import { VERTEX_PART_BLOCK_TYPE, type VertexPart } from "./convert-to-vertex-request.ts";
import { isRecord } from "./is-record.ts";
import { fromPayload } from "./vertex-error.ts";

/** Normalised stop reasons for Gemini `finishReason` values; anything unlisted becomes "other". */
const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  STOP: "end_turn",
  MAX_TOKENS: "max_tokens",
  SAFETY: "refusal",
  RECITATION: "refusal",
  BLOCKLIST: "refusal",
  PROHIBITED_CONTENT: "refusal",
  SPII: "refusal",
  IMAGE_SAFETY: "refusal",
  LANGUAGE: "refusal",
  MALFORMED_FUNCTION_CALL: "other",
  UNEXPECTED_TOOL_CALL: "other",
  TOO_MANY_TOOL_CALLS: "other",
  OTHER: "other",
  FINISH_REASON_UNSPECIFIED: "other",
};

/** Maps a Gemini finish reason; STOP with function calls in the turn is "tool_use". */
export function normalizeFinishReason(
  finishReason: string | undefined,
  sawFunctionCall: boolean,
): StopReason {
  if (sawFunctionCall && (finishReason === undefined || finishReason === "STOP")) return "tool_use";
  if (finishReason === undefined) return "end_turn";
  return STOP_REASONS[finishReason] ?? "other";
}

/**
 * Gemini usage → core usage. `promptTokenCount` already includes the cached part, so the cached tokens
 * move from input to cache reads; thinking tokens are output; tool-use prompt tokens are input. Vertex
 * has no cache-creation count (context caches are created explicitly, not per request).
 */
export function normalizeUsageMetadata(metadata: unknown): Usage {
  const read = (key: string): number => {
    const value = isRecord(metadata) ? metadata[key] : undefined;
    return typeof value === "number" && Number.isFinite(value) ? value : 0;
  };
  const cached = read("cachedContentTokenCount");
  return {
    inputTokens: Math.max(0, read("promptTokenCount") - cached) + read("toolUsePromptTokenCount"),
    outputTokens: read("candidatesTokenCount") + read("thoughtsTokenCount"),
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: cached,
  };
}

/**
 * A deterministic id for a Gemini function call, which has none on the wire: a hash of the request that
 * produced it, the call's position and its name and arguments. The same request gives the same ids
 * (streaming and non-streaming agree); different turns give different ids.
 */
export function vertexToolCallId(
  requestDigest: string,
  position: number,
  name: string,
  args: unknown,
): string {
  const hash = createHash("sha256").update(
    `${requestDigest}\n${position}\n${name}\n${JSON.stringify(args ?? {})}`,
  );
  return `toolu_vertex_${hash.digest("hex").slice(0, 24)}`;
}

/** A digest of the request body, the seed of the call ids of its response. */
export function digestRequestBody(body: unknown): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

type OpenKind = "text" | "thinking";

/**
 * Turns Gemini response chunks (a whole response is one chunk) into normalised stream events. Text and
 * thought text are merged across chunks into one block each; every function call is a whole `tool_use`
 * block; a `thoughtSignature` on a thought part is that block's signature, on any other part it becomes a
 * signature-only thinking block right after that part's block; parts this version does not model become
 * `UnknownBlock`s of type `vertex_part`.
 */
export class VertexStreamTranslator {
  private started = false;
  private blockCount = 0;
  private open: { kind: OpenKind; index: number } | undefined;
  private functionCalls = 0;
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private blockReason: string | undefined;
  private readonly requestDigest: string;
  private readonly requestedModel: string;

  constructor(requestDigest: string, requestedModel: string) {
    this.requestDigest = requestDigest;
    this.requestedModel = requestedModel;
  }

  /** Events for one chunk; the first call also yields `message_start`. */
  *push(chunk: unknown): Generator<ModelStreamEvent> {
    const response = isRecord(chunk) ? chunk : {};
    if (!this.started) {
      this.started = true;
      const id =
        typeof response.responseId === "string"
          ? response.responseId
          : `vertex_${this.requestDigest.slice(0, 24)}`;
      const model = typeof response.modelVersion === "string" ? response.modelVersion : this.requestedModel;
      yield { type: "message_start", id, model, usage: normalizeUsageMetadata(response.usageMetadata) };
    }
    if (response.usageMetadata !== undefined) this.usage = normalizeUsageMetadata(response.usageMetadata);
    const feedback = response.promptFeedback;
    if (isRecord(feedback) && typeof feedback.blockReason === "string")
      this.blockReason = feedback.blockReason;
    const candidates = Array.isArray(response.candidates) ? response.candidates : [];
    const candidate = candidates[0];
    if (!isRecord(candidate)) return;
    if (typeof candidate.finishReason === "string") this.finishReason = candidate.finishReason;
    const content = candidate.content;
    const parts = isRecord(content) && Array.isArray(content.parts) ? content.parts : [];
    for (const part of parts) if (isRecord(part)) yield* this.part(part);
  }

  /** Closing events: the open block's stop, the stop reason and final usage, and `message_stop` if the wire ended the message. */
  *finish(): Generator<ModelStreamEvent> {
    if (!this.started) yield* this.push({});
    yield* this.close();
    // Gemini's end of message is a finish reason (or a blocked prompt); without one the answer was cut
    // short, and no stop reason or `message_stop` may pretend otherwise.
    if (this.finishReason === undefined && this.blockReason === undefined) return;
    const stopReason = this.blockReason
      ? "refusal"
      : normalizeFinishReason(this.finishReason, this.functionCalls > 0);
    const rawStopReason = this.blockReason ?? this.finishReason;
    yield {
      type: "message_delta",
      stopReason,
      ...(rawStopReason === undefined ? {} : { rawStopReason }),
      ...(this.usage === undefined ? {} : { usage: this.usage }),
    };
    yield { type: "message_stop" };
  }

  private *part(part: VertexPart): Generator<ModelStreamEvent> {
    const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
    if (typeof part.text === "string" && !hasOtherPayload(part)) {
      const kind: OpenKind = part.thought === true ? "thinking" : "text";
      if (part.text !== "" || (kind === "thinking" && signature !== undefined)) {
        const index = yield* this.ensureOpen(kind);
        if (part.text !== "") {
          yield kind === "text"
            ? { type: "text_delta", index, text: part.text }
            : { type: "thinking_delta", index, thinking: part.text };
        }
      }
      if (signature === undefined) return;
      if (kind === "thinking") {
        const index = this.open?.index ?? (yield* this.ensureOpen("thinking"));
        yield { type: "signature_delta", index, signature };
        return;
      }
      yield* this.close();
      yield* this.signatureBlock(signature);
      return;
    }
    yield* this.close();
    if (isRecord(part.functionCall) && typeof part.functionCall.name === "string") {
      const args = isRecord(part.functionCall.args) ? part.functionCall.args : {};
      const index = this.blockCount++;
      const id = vertexToolCallId(this.requestDigest, this.functionCalls++, part.functionCall.name, args);
      yield {
        type: "block_start",
        index,
        block: { type: "tool_use", id, name: part.functionCall.name, input: {} },
      };
      yield { type: "tool_input_delta", index, partialJson: JSON.stringify(args) };
      yield { type: "block_stop", index };
    } else if (isRecord(part.inlineData) && typeof part.inlineData.data === "string") {
      const mimeType =
        typeof part.inlineData.mimeType === "string" ? part.inlineData.mimeType : "application/octet-stream";
      const block: ContentBlock = mimeType.startsWith("image/")
        ? { type: "image", source: { type: "base64", media_type: mimeType, data: part.inlineData.data } }
        : { type: "document", source: { type: "base64", media_type: mimeType, data: part.inlineData.data } };
      yield* this.whole(block);
    } else {
      yield* this.whole({
        type: "unknown",
        original: { type: VERTEX_PART_BLOCK_TYPE, part: structuredClone(part) },
      });
      return;
    }
    if (signature !== undefined) yield* this.signatureBlock(signature);
  }

  private *ensureOpen(kind: OpenKind): Generator<ModelStreamEvent, number> {
    if (this.open?.kind === kind) return this.open.index;
    yield* this.close();
    const index = this.blockCount++;
    this.open = { kind, index };
    yield {
      type: "block_start",
      index,
      block: kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" },
    };
    return index;
  }

  private *close(): Generator<ModelStreamEvent> {
    if (!this.open) return;
    yield { type: "block_stop", index: this.open.index };
    this.open = undefined;
  }

  private *whole(block: ContentBlock): Generator<ModelStreamEvent> {
    const index = this.blockCount++;
    yield { type: "block_start", index, block };
    yield { type: "block_stop", index };
  }

  private *signatureBlock(signature: string): Generator<ModelStreamEvent> {
    yield* this.whole({ type: "thinking", thinking: "", signature });
  }
}

function hasOtherPayload(part: VertexPart): boolean {
  return Object.keys(part).some((key) => key !== "text" && key !== "thought" && key !== "thoughtSignature");
}

/**
 * The events of a Gemini response stream (a whole response is a stream of one chunk). A chunk that carries
 * `{error: …}` (Vertex reports failures inside a 200 stream that way) ends it with the typed error.
 */
export async function* translateVertexStream(
  chunks: AsyncIterable<unknown> | Iterable<unknown>,
  requestDigest: string,
  requestedModel: string,
): AsyncGenerator<ModelStreamEvent> {
  const translator = new VertexStreamTranslator(requestDigest, requestedModel);
  let first = true;
  for await (const chunk of chunks) {
    throwIfErrorChunk(chunk, first ? "error-response" : "stream-error");
    first = false;
    yield* translator.push(chunk);
  }
  // No chunk at all is a dropped connection, which the runtime retries: nothing to close.
  if (!first) yield* translator.finish();
}

function throwIfErrorChunk(chunk: unknown, source: "error-response" | "stream-error"): void {
  if (!isRecord(chunk) || !isRecord(chunk.error)) return;
  const error = chunk.error;
  throw fromPayload(
    {
      ...(typeof error.code === "number" ? { code: error.code } : {}),
      ...(typeof error.message === "string" ? { message: error.message } : {}),
      ...(typeof error.status === "string" ? { status: error.status } : {}),
      ...(Array.isArray(error.details) ? { details: error.details } : {}),
    },
    source,
    chunk,
  );
}
