import type { Message } from "@unforget/core";
import type { ContextEdit } from "@unforget/transcript";
import type { CompactionOutcome } from "../summary/compaction-outcome.ts";
import { estimateTokens } from "./conversation.ts";

/** The messages no layer may clear, fold, snip or summarise away, and the tool calls they hold. */
export interface PinnedSet {
  /** Ids of the pinned messages, each pinned message's tool partners included. */
  readonly messageIds: ReadonlySet<string>;
  /** The tool_use ids of the calls and results those messages hold. */
  readonly toolUseIds: ReadonlySet<string>;
}

export const NO_PINS: PinnedSet = { messageIds: new Set(), toolUseIds: new Set() };

/** The message that holds the item `id` names: a message id, or a tool_use id (its call's message). */
export function resolvePinTarget(messages: readonly Message[], id: string): Message | undefined {
  return (
    messages.find((message) => message.id === id) ??
    messages.find((message) =>
      message.content.some(
        (block) =>
          (block.type === "tool_use" && block.id === id) ||
          (block.type === "tool_result" && block.tool_use_id === id),
      ),
    )
  );
}

/**
 * The pinned set of `roots` in `messages`: each root and, until nothing changes, every message that holds the
 * other half of a tool call one of them holds (a call's result, a result's call). So what is kept never has a
 * tool_use without its tool_result, nor a result without its use. Roots not in `messages` are left out.
 */
export function pinClosure(messages: readonly Message[], roots: Iterable<string>): PinnedSet {
  const byToolUse = new Map<string, Message[]>();
  for (const message of messages) {
    for (const id of toolIds(message)) {
      const holders = byToolUse.get(id) ?? [];
      holders.push(message);
      byToolUse.set(id, holders);
    }
  }
  const present = new Set(messages.map((message) => message.id));
  const byId = new Map(messages.map((message) => [message.id, message]));
  const messageIds = new Set<string>();
  const toolUseIds = new Set<string>();
  const queue = [...roots].filter((id) => present.has(id));
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (messageIds.has(id)) continue;
    messageIds.add(id);
    for (const toolId of toolIds(byId.get(id)!)) {
      toolUseIds.add(toolId);
      for (const partner of byToolUse.get(toolId) ?? [])
        if (!messageIds.has(partner.id)) queue.push(partner.id);
    }
  }
  return { messageIds, toolUseIds };
}

function toolIds(message: Message): string[] {
  return message.content.flatMap((block) =>
    block.type === "tool_use" ? [block.id] : block.type === "tool_result" ? [block.tool_use_id] : [],
  );
}

/**
 * A cheap layer's edits with the pinned messages left alone: an edit that replaces a pinned tool result or
 * message is dropped, and a removed run loses its pinned messages (they stay where they are, its replacement
 * stands for the rest).
 */
export function withoutPinned(edits: readonly ContextEdit[], pinned: PinnedSet): ContextEdit[] {
  if (pinned.messageIds.size === 0) return [...edits];
  return edits.flatMap((edit): ContextEdit[] => {
    if (edit.kind === "replace_tool_result") return pinned.toolUseIds.has(edit.toolUseIds[0]) ? [] : [edit];
    if (edit.kind === "replace_message") return pinned.messageIds.has(edit.messageIds[0]) ? [] : [edit];
    const messageIds = edit.messageIds.filter((id) => !pinned.messageIds.has(id));
    if (messageIds.length === edit.messageIds.length) return [edit];
    return messageIds.length === 0 ? [] : [{ ...edit, messageIds }];
  });
}

/**
 * A summary's outcome with the pinned messages it would stand for kept verbatim instead: after the summary, in
 * their order and before the recent messages it keeps (a boundary), or in place (a range replaced).
 */
export function keepPinned(
  messages: readonly Message[],
  outcome: CompactionOutcome,
  pinned: PinnedSet,
): CompactionOutcome {
  const moved = outcome.summarizedMessageIds.filter((id) => pinned.messageIds.has(id));
  if (moved.length === 0) return outcome;
  const movedSet = new Set(moved);
  const order = new Map(messages.map((message, index) => [message.id, index]));
  const kept =
    outcome.mode === "boundary"
      ? [...moved.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)), ...outcome.keptMessageIds]
      : outcome.keptMessageIds;
  return {
    ...outcome,
    summarizedMessageIds: outcome.summarizedMessageIds.filter((id) => !movedSet.has(id)),
    keptMessageIds: kept,
    tokensAfter: outcome.tokensAfter + estimateTokens(messages.filter((message) => movedSet.has(message.id))),
  };
}
