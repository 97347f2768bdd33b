import type { Message } from "@unforget/core";
import { type CarriedUserMessage, renderCarriedUserMessages } from "../conversation/carried-user-messages.ts";
import { REPLACED_IDS_SHOWN_AT_EACH_END } from "../defaults.ts";
import type { ContinuationStyle } from "./compaction-outcome.ts";

/** The tool_use ids of the calls in a summarised span, in order (the ids history_read and history_search use). */
export function replacedToolUseIds(messages: readonly Message[]): string[] {
  return messages.flatMap((message) =>
    message.role === "assistant" && Array.isArray(message.content)
      ? message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
      : [],
  );
}

/** The line naming the calls a summary replaced: every id, or the first and last few and a count. */
function replacedCallsLine(ids: readonly string[], tight: boolean): string {
  const shown = tight ? 2 : REPLACED_IDS_SHOWN_AT_EACH_END;
  const list =
    ids.length <= shown * 2
      ? ids.join(", ")
      : `${ids.slice(0, shown).join(", ")}, … ${ids.length - shown * 2} more …, ${ids.slice(-shown).join(", ")}`;
  return `It replaced ${ids.length} tool call${ids.length === 1 ? "" : "s"} (history_read ids ${list}): read any of them back byte-exact with history_read, or find one with history_search.`;
}

/**
 * The user message that carries a summary: what it is, the summary, the user's messages of the part it stands
 * for and where the work stands (both carried by the ladder, whatever the summary says), and how to go on.
 */
export function summaryMessageText(
  summary: string,
  continuation: ContinuationStyle,
  transcriptPath?: string,
  userMessages: readonly CarriedUserMessage[] = [],
  sessionDir?: string,
  toolUseIds: readonly string[] = [],
  continuationBlock?: string,
  /** The shortest wording of the fixed prose and fewer replaced ids, for a budget the parts barely fit. */
  tight = false,
): string {
  const parts = [
    "This session continues an earlier conversation that ran out of context. The summary below stands for the earlier part.",
    "",
    "<summary>",
    summary,
    "</summary>",
  ];
  if (toolUseIds.length > 0) parts.push("", replacedCallsLine(toolUseIds, tight));
  if (userMessages.length > 0) parts.push("", renderCarriedUserMessages(userMessages, sessionDir));
  // Where the work stands (`<continuation>`), derived by the ladder from the replaced messages.
  if (continuationBlock) parts.push("", continuationBlock);
  if (transcriptPath && tight) {
    parts.push("", `The full earlier transcript is at ${transcriptPath}.`);
  } else if (transcriptPath) {
    parts.push(
      "",
      `The full earlier transcript is at ${transcriptPath}; read it if you need an exact detail (a code snippet, an error message) that the summary does not have.`,
    );
  }
  if (continuation === "interactive") {
    parts.push(
      "",
      "Continue from where the conversation stopped without asking the user anything further. Do not acknowledge or recap this summary; go on with the last task as if there had been no break.",
    );
  } else if (continuation === "autonomous") {
    parts.push(
      "",
      "You are running autonomously and this is not a fresh start: continue the work loop from where it stopped. Do not greet anyone and do not ask what to work on.",
    );
  }
  return parts.join("\n");
}
