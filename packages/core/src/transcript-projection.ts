import type { Message } from "./message.ts";
import { createMessage } from "./message.ts";
import type { TranscriptEntry } from "./transcript-entry.ts";

/**
 * The messages the model sees, computed from the transcript: the message entries after the last
 * compact_boundary, in order. The summary's user message (`isCompactSummary`) that follows a boundary is
 * included. When a boundary is followed only by a `summary` entry of kind "compact" (no summary message), a
 * meta user message carrying that summary text opens the projection. Layer edits are not applied here.
 */
export function projectMessages(entries: readonly TranscriptEntry[]): Message[] {
  let start = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]?.type === "compact_boundary") {
      start = index + 1;
      break;
    }
  }
  const messages: Message[] = [];
  let compactSummary: { text: string; timestamp: string; id: string } | undefined;
  for (let index = start; index < entries.length; index++) {
    const entry = entries[index]!;
    if (entry.type === "message") messages.push(entry.message);
    else if (entry.type === "summary" && entry.kind === "compact" && compactSummary === undefined) {
      compactSummary = { text: entry.text, timestamp: entry.timestamp, id: entry.id };
    }
  }
  if (compactSummary && start > 0 && !messages.some((message) => message.isCompactSummary)) {
    messages.unshift(
      createMessage("user", compactSummary.text, {
        id: `${compactSummary.id}_message`,
        timestamp: compactSummary.timestamp,
        isMeta: true,
        isCompactSummary: true,
      }),
    );
  }
  return messages;
}
