import { createMessage, groupByApiRound, type Message } from "@unforget/core";
import { clip, estimateTokens, isUserAuthored, userText } from "./conversation.ts";
import { HEAD_DROP_FRACTION } from "./defaults.ts";

/** The marker that opens a conversation whose head was dropped; stripped before regrouping on the next retry. */
export const HEAD_TRUNCATION_MARKER_ID = "compact_head_truncated";

export interface HeadTruncation {
  messages: Message[];
  /** API rounds dropped. */
  droppedRounds: number;
}

/**
 * Drops the oldest API rounds so that a summary request fits: as many as cover `tokenGap` when the provider
 * said it (else 20 % of the rounds, at least one). Whole rounds only, so no tool pair is split. The marker
 * of an earlier truncation is removed first; a new one opens the remainder and quotes the user's messages
 * from the dropped part (so they still reach the summary). Returns undefined when nothing would be left.
 */
export function truncateHeadForRetry(
  messages: readonly Message[],
  tokenGap?: number,
): HeadTruncation | undefined {
  const withoutMarker = messages.filter((message) => message.id !== HEAD_TRUNCATION_MARKER_ID);
  const carriedQuotes = messages.find((message) => message.id === HEAD_TRUNCATION_MARKER_ID)?.metadata
    ?.quotes;
  const groups = groupByApiRound(withoutMarker);
  if (groups.length <= 1) return undefined;
  let drop = 0;
  if (tokenGap !== undefined && tokenGap > 0) {
    let freed = 0;
    while (drop < groups.length - 1 && freed < tokenGap) {
      freed += estimateTokens(groups[drop]!.messages);
      drop++;
    }
  } else {
    drop = Math.max(1, Math.floor(groups.length * HEAD_DROP_FRACTION));
  }
  drop = Math.min(drop, groups.length - 1);
  const dropped = groups.slice(0, drop).flatMap((group) => group.messages);
  const rest = groups.slice(drop).flatMap((group) => group.messages);
  if (rest.length === 0) return undefined;
  const quotes = [
    ...(Array.isArray(carriedQuotes) ? (carriedQuotes as string[]) : []),
    ...dropped.filter(isUserAuthored).map((message) => clip(userText(message), 1_000)),
  ];
  const text = [
    `[The oldest part of the conversation (${dropped.length} messages) was left out so that this summary request fits the context window.]`,
    ...(quotes.length > 0
      ? ["The user's messages from that part, verbatim:", ...quotes.map((quote) => `- "${quote}"`)]
      : []),
  ].join("\n");
  const marker = createMessage("user", text, {
    id: HEAD_TRUNCATION_MARKER_ID,
    timestamp: rest[0]!.timestamp,
    isMeta: true,
    metadata: { quotes },
  });
  return { messages: [marker, ...rest], droppedRounds: drop };
}
