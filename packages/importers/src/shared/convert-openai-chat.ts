import type { ContentBlock, Message, ToolResultContentBlock } from "@unforget/core";
import { appendAll } from "./append-all.ts";
import { acceptNesting, convertItem } from "./guard-import.ts";
import type { ImportDraft, ImportLocation } from "./import-result.ts";
import { countSkipped, reportProblem } from "./import-result.ts";
import { isRecord } from "./is-record.ts";
import { exceedsNesting, MAX_NESTING } from "./nesting.ts";
import { EPOCH, readTimestamp } from "./source-timestamp.ts";

export interface OpenAiChatConversionOptions {
  /** Prefix of message ids (`<prefix>-<index>`). */
  idPrefix: string;
  /** Extra metadata to keep from each source message (e.g. SWE-agent's thought and action). */
  keepFields?: readonly string[];
  /**
   * The agent runs on its own and sends the environment's output as user messages (SWE-agent,
   * mini-swe-agent): a user text message that answers an assistant message is marked `isObservation`, so
   * compaction treats it as tool output and not as the user's words.
   */
  observationsAsUserText?: boolean;
}

/**
 * Converts OpenAI chat messages (`system`, `user`, `assistant` with `tool_calls`, `tool` with
 * `tool_call_id` or SWE-agent's `tool_call_ids`) into the message model and pushes them onto the draft.
 * System messages become `draft.system`. Consecutive tool and user messages become one user message, and
 * consecutive assistant messages one assistant message: legal in OpenAI chat, one turn each in this model;
 * they are counted in `mergedSourceItems`. Demonstrations (`is_demo`) become meta user messages.
 */
export function convertOpenAiChatMessages(
  history: readonly unknown[],
  draft: ImportDraft,
  options: OpenAiChatConversionOptions,
): void {
  const state: ChatConversionState = {
    draft,
    options,
    systemParts: [],
    previous: undefined,
    lastTimestamp: undefined,
  };
  history.forEach((raw, index) => {
    draft.counts.sourceItems++;
    const location: ImportLocation = { index };
    if (acceptNesting(draft, location, raw)) {
      convertItem(draft, location, () => convertChatMessage(state, raw, index, location));
    }
  });
  if (state.systemParts.length > 0) draft.system = state.systemParts.join("\n\n");
}

/** What the conversion keeps from one chat message to the next. */
interface ChatConversionState {
  draft: ImportDraft;
  options: OpenAiChatConversionOptions;
  systemParts: string[];
  /** The message built last, which a following message of the same role may join. */
  previous: { message: Message; kind: "tool" | "user" | "assistant" } | undefined;
  lastTimestamp: string | undefined;
}

function convertChatMessage(
  state: ChatConversionState,
  raw: unknown,
  index: number,
  location: ImportLocation,
): void {
  const { draft, options, previous } = state;
  if (!isRecord(raw) || typeof raw.role !== "string") {
    draft.counts.invalid++;
    reportProblem(
      draft,
      "invalid_message",
      location,
      "The history item is not a message with a role; it was skipped.",
    );
    return;
  }
  const timestamp = readTimestamp(draft, raw.timestamp, location) ?? state.lastTimestamp ?? EPOCH;
  state.lastTimestamp = timestamp;
  if (raw.role === "system" || raw.role === "developer") {
    state.systemParts.push(textOf(raw.content));
    return;
  }
  const converted = chatContent(raw, raw.role, location, draft);
  if (converted === undefined) return;
  const { role, kind, content } = converted;
  const isDemo = raw.is_demo === true;
  const mergeable =
    previous !== undefined &&
    previous.message.role === role &&
    !isDemo &&
    previous.message.isMeta !== true &&
    // A user's words after tool results join that turn; tool results after user text start a new turn
    // only if nothing answered yet (they cannot precede text in the same turn otherwise).
    !(kind === "tool" && previous.kind === "user");
  if (mergeable && previous) {
    appendAll(previous.message.content, content);
    (previous.message.metadata!.sourceIndices as number[]).push(index);
    previous.kind = kind === "user" ? "user" : previous.kind;
    draft.counts.mergedSourceItems++;
    return;
  }
  const message: Message = {
    id: `${options.idPrefix}-${index}`,
    role,
    content,
    timestamp,
    metadata: { source: location, sourceIndices: [index] },
  };
  if (isDemo) {
    message.isMeta = true;
    message.metadata!.isDemonstration = true;
  } else if (options.observationsAsUserText && kind === "user" && previous?.message.role === "assistant") {
    message.isObservation = true;
  }
  for (const field of options.keepFields ?? []) {
    if (raw[field] !== undefined && raw[field] !== null) message.metadata![field] = raw[field];
  }
  draft.items.push({ kind: "message", message, location });
  state.previous = { message, kind };
}

/** The role, turn kind and blocks of a chat message; undefined (reported) for a role this model has no place for. */
function chatContent(
  raw: Record<string, unknown>,
  sourceRole: string,
  location: ImportLocation,
  draft: ImportDraft,
): { role: "user" | "assistant"; kind: "tool" | "user" | "assistant"; content: ContentBlock[] } | undefined {
  if (sourceRole === "tool" || sourceRole === "function") {
    const ids = toolCallIds(raw);
    if (ids.length === 0) {
      reportProblem(
        draft,
        "missing_tool_call_id",
        location,
        "A tool message names no tool_call_id; its output was kept as user text.",
      );
      return { role: "user", kind: "tool", content: textBlocks(raw.content) };
    }
    const result = toolResultContent(raw.content);
    return {
      role: "user",
      kind: "tool",
      content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: result })),
    };
  }
  if (sourceRole === "user") return { role: "user", kind: "user", content: textBlocks(raw.content) };
  if (sourceRole === "assistant") {
    const content = textBlocks(raw.content);
    appendAll(content, toolUses(raw.tool_calls, location, draft));
    return { role: "assistant", kind: "assistant", content };
  }
  countSkipped(draft, `role:${sourceRole}`);
  reportProblem(draft, "unknown_role", location, `A message with role "${sourceRole}" was skipped.`);
  return undefined;
}

function toolCallIds(raw: Record<string, unknown>): string[] {
  if (typeof raw.tool_call_id === "string") return [raw.tool_call_id];
  if (Array.isArray(raw.tool_call_ids))
    return raw.tool_call_ids.filter((id): id is string => typeof id === "string");
  return [];
}

/** Text of OpenAI content: a string, or an array of parts whose text parts are joined. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : ""))
      .filter((text) => text.length > 0)
      .join("\n");
  }
  return "";
}

/** OpenAI content as blocks: text parts become text blocks, image_url parts image blocks; empty text is dropped. */
export function textBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content.length === 0 ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: ContentBlock[] = [];
  for (const part of content) {
    if (typeof part === "string") {
      if (part.length > 0) blocks.push({ type: "text", text: part });
    } else if (isRecord(part) && typeof part.text === "string") {
      if (part.text.length > 0) blocks.push({ type: "text", text: part.text });
    } else if (isRecord(part) && part.type === "image_url" && isRecord(part.image_url)) {
      const url = part.image_url.url;
      if (typeof url === "string") blocks.push(imageFromUrl(url));
    } else if (isRecord(part) && typeof part.type === "string") {
      blocks.push({ type: "unknown", original: part as { type: string } });
    }
  }
  return blocks;
}

function imageFromUrl(url: string): ContentBlock {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match) return { type: "image", source: { type: "base64", media_type: match[1]!, data: match[2]! } };
  return { type: "image", source: { type: "url", url } };
}

function toolResultContent(content: unknown): string | ToolResultContentBlock[] {
  if (typeof content === "string") return content;
  const blocks = textBlocks(content).filter(
    (block): block is ToolResultContentBlock => block.type === "text" || block.type === "image",
  );
  return blocks.length === 0 ? "" : blocks;
}

/** Parses OpenAI `tool_calls` into tool_use blocks; unparsable arguments are kept as `{ raw }` and reported. */
export function toolUses(toolCalls: unknown, location: ImportLocation, draft: ImportDraft): ContentBlock[] {
  if (!Array.isArray(toolCalls)) return [];
  const blocks: ContentBlock[] = [];
  toolCalls.forEach((call, position) => {
    if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== "string") {
      reportProblem(
        draft,
        "invalid_tool_call",
        location,
        `Tool call ${position} has no function name; it was skipped.`,
      );
      return;
    }
    const id = typeof call.id === "string" && call.id.length > 0 ? call.id : undefined;
    if (id === undefined) {
      reportProblem(draft, "invalid_tool_call", location, `Tool call ${position} has no id; it was skipped.`);
      return;
    }
    blocks.push({
      type: "tool_use",
      id,
      name: call.function.name,
      input: parseArguments(call.function.arguments, location, draft),
    });
  });
  return blocks;
}

export function parseArguments(raw: unknown, location: ImportLocation, draft: ImportDraft): unknown {
  if (typeof raw !== "string") return raw ?? {};
  if (raw.trim().length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    reportProblem(
      draft,
      "unparsed_arguments",
      location,
      "Tool call arguments are not valid JSON; they were kept as { raw: <text> }.",
    );
    return { raw };
  }
  if (exceedsNesting(parsed)) {
    reportProblem(
      draft,
      "too_deep",
      location,
      `Tool call arguments nest more than ${MAX_NESTING} levels deep; they were kept as { raw: <text> }.`,
    );
    return { raw };
  }
  return parsed;
}
