import type { Message, RequestMessage } from "@unforget/core";
import { extendRequestMessages } from "@unforget/transcript";
import { isFoldableRound } from "./collapse-context.ts";
import { compactablePredicate } from "./compactable-tools.ts";
import { indexToolUses, isTextObservation, resultText, userText } from "./conversation.ts";
import { isClearedResult } from "./microcompact.ts";

/**
 * Index of the first message a cheap layer could still change: the first completed tool round collapse may
 * fold, or the first tool output microcompact may clear. Every message before it is settled: until the next
 * summary, no cheap layer touches it.
 */
export function settledMessages(messages: readonly Message[]): number {
  const compactable = compactablePredicate(undefined);
  let calls: ReturnType<typeof indexToolUses> | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const next = messages[index + 1];
    if (next && isFoldableRound(message, next, compactable)) return index;
    if (message.role !== "user") continue;
    if (isTextObservation(message)) {
      if (!isClearedResult(userText(message))) return index;
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result" || isClearedResult(resultText(block))) continue;
      calls ??= indexToolUses(messages);
      const call = calls.get(block.tool_use_id);
      if (call && compactable(call.use.name)) return index;
    }
  }
  return messages.length;
}

/**
 * How many blocks at the start of `request` (the request of `projected`) are settled (see `settledMessages`):
 * a cache breakpoint on the last of them keeps them cached when the cheap layers fold what follows
 * (`withCacheBreakpoints(prompt, { settledBlocks })`). 0 when nothing is settled.
 */
export function settledBlocks(projected: readonly Message[], request: readonly RequestMessage[]): number {
  const settled = settledMessages(projected);
  if (settled === 0) return 0;
  const head = extendRequestMessages([], projected.slice(0, settled));
  let blocks = 0;
  for (let index = 0; index < head.length; index++) {
    const mine = head[index]!.content;
    const sent = request[index]?.content ?? [];
    // The last settled message may be merged with the next one in the request: its blocks must come first.
    const same = mine.every(
      (block, at) => block === sent[at] || JSON.stringify(block) === JSON.stringify(sent[at]),
    );
    if (!same) break;
    blocks += mine.length;
    if (mine.length !== sent.length) break;
  }
  return blocks;
}
