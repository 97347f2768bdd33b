import type { Message } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";

/**
 * The entries of a transcript that its projection still reads, from the latest compact boundary on: the
 * boundary and everything after it, and before it only the messages of its preserved segment, the layer
 * decisions whose edits name something still projected (a kept message, a tool call in one, or a replacement
 * such an edit made), and the pin entries (a manager replays its pins from them). `projectContext` of the result
 * equals `projectContext` of `entries`; without a boundary, `entries` is returned as it is. Everything else
 * (older summaries, boundaries, messages and decisions) stays in the transcript on disk. `lastPassed` is the
 * last message the caller passed: its entry is kept too (it projects nothing), so that a manager resumed from
 * the result knows where the caller's conversation stood.
 */
export function retainedEntries(
  entries: readonly TranscriptEntry[],
  lastPassed?: string,
): readonly TranscriptEntry[] {
  let boundaryIndex = -1;
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]!.type === "compact_boundary") {
      boundaryIndex = index;
      break;
    }
  }
  if (boundaryIndex <= 0) return entries;
  const boundary = entries[boundaryIndex]!;
  const preserved = new Set(
    boundary.type === "compact_boundary" ? (boundary.preservedSegment?.messageIds ?? []) : [],
  );
  // The ids an edit may name that are projected: every message kept or after the boundary, and its tool calls.
  const named = new Set<string>();
  const note = (message: Message) => {
    named.add(message.id);
    for (const block of message.content) {
      if (block.type === "tool_use") named.add(block.id);
      else if (block.type === "tool_result") named.add(block.tool_use_id);
    }
  };
  for (let index = 0; index < boundaryIndex; index++) {
    const entry = entries[index]!;
    if (entry.type === "message" && preserved.has(entry.message.id)) note(entry.message);
  }
  for (let index = boundaryIndex + 1; index < entries.length; index++) {
    const entry = entries[index]!;
    if (entry.type === "message") note(entry.message);
    else if (entry.type === "attachment" || entry.type === "summary") named.add(entry.id);
  }
  const kept: TranscriptEntry[] = [];
  for (let index = 0; index < boundaryIndex; index++) {
    const entry = entries[index]!;
    if (entry.type === "message") {
      if (preserved.has(entry.message.id) || entry.message.id === lastPassed) kept.push(entry);
    } else if (entry.type === "pin") {
      kept.push(entry);
    } else if (entry.type === "layer_decision" && namesAny(entry.edits, named)) {
      kept.push(entry);
      // A later edit may name the replacement this one put in (a fold folded again).
      for (const edit of entry.edits) {
        const id = (edit.details as { replacement?: { id?: unknown } } | undefined)?.replacement?.id;
        if (typeof id === "string") named.add(id);
      }
    }
  }
  for (let index = boundaryIndex; index < entries.length; index++) kept.push(entries[index]!);
  return kept;
}

function namesAny(
  edits: readonly { messageIds?: readonly string[]; toolUseIds?: readonly string[] }[],
  named: ReadonlySet<string>,
): boolean {
  return edits.some(
    (edit) =>
      (edit.messageIds?.some((id) => named.has(id)) ?? false) ||
      (edit.toolUseIds?.some((id) => named.has(id)) ?? false),
  );
}
