import type { Message } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";
import type { SessionRuntime } from "./session-runtime.ts";

/** Called after the manager saw the whole conversation (`prepare`, `recover`, `compact`): see `trimConversation`. */
export function trimSessionConversation(runtime: SessionRuntime): void {
  const { options } = runtime;
  if ((options.context?.retainEntries ?? "context") !== "context") return;
  const extracting = runtime.memory !== undefined && options.memory?.consent !== "off";
  trimConversation(
    runtime.conversation,
    runtime.manager.entries,
    extracting ? { cursor: runtime.extractedThrough } : undefined,
  );
}

/**
 * Trims the session's conversation in place, once the manager has seen all of it (after `prepare`, `recover`,
 * `compact`), to what is still needed: the messages the manager's entries hold (those the context is projected
 * from), the last message it was given (where its next call starts), and, while memory extracts, everything
 * from extraction's cursor on (all of it before extraction's first run). Whatever reads the list (memory's notes,
 * `session.messages`) reads the trimmed one; the transcript on disk keeps every message.
 */
export function trimConversation(
  conversation: Message[],
  entries: readonly TranscriptEntry[],
  extraction: { cursor: string | undefined } | undefined,
): void {
  const retained = new Set<string>();
  for (const entry of entries) if (entry.type === "message") retained.add(entry.message.id);
  if (conversation.length <= retained.size + 1) return;
  let from = conversation.length;
  if (extraction) {
    if (extraction.cursor === undefined) return;
    const index = conversation.findIndex((message) => message.id === extraction.cursor);
    if (index >= 0) from = index;
  }
  const last = conversation.length - 1;
  const kept = conversation.filter(
    (message, index) => index >= from || index === last || retained.has(message.id),
  );
  if (kept.length < conversation.length) conversation.splice(0, conversation.length, ...kept);
}
