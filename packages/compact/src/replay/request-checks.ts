import { contentBlocks, findToolPairViolations, type Message, type RequestMessage } from "@unforget/core";
import { foldsIn, messagesInFolds } from "../conversation/carried-fold.ts";
import { isTextObservation, resultText, userText } from "../conversation/conversation.ts";
import { findNewestTurn } from "../conversation/newest-turn.ts";

/**
 * A user message counts as kept when its first characters appear in the request (verbatim, or quoted in a
 * summary or placeholder, which cut long messages but never below this), or when a fold in the request names it:
 * a range of the user's messages whose both ends are messages the user sent and which stands for exactly those
 * between them (`messagesInFolds`), so that `history_read` of the range lists each one.
 */
export const USER_PREFIX_CHARS = 100;

/** The user's messages the folds in a request's (or an output's) text blocks name, by message id. */
export function foldedUserMessages(
  messages: readonly Pick<RequestMessage, "content">[],
  users: readonly Message[],
): Set<string> {
  const folds = messages.flatMap((message) =>
    contentBlocks(message.content).flatMap((block) => (block.type === "text" ? foldsIn(block.text) : [])),
  );
  return folds.length === 0 ? new Set() : messagesInFolds(users, folds);
}

/** What a request lost: broken tool pairs, and user messages neither in it, quoted by a summary nor folded. */
export function checkRequest(request: readonly RequestMessage[], users: readonly Message[]): string[] {
  const problems = findToolPairViolations(
    request.map((message, index) => ({
      ...message,
      content: contentBlocks(message.content),
      id: `request-${index}`,
      timestamp: "",
    })),
  ).map((violation) => violation.description);
  // A user message whose blocks are in the request is there verbatim; only the others are searched for in
  // the request's text (quoted by a summary or a placeholder), which is then serialised once.
  const blocks = new Set<unknown>();
  for (const message of request) for (const block of contentBlocks(message.content)) blocks.add(block);
  let text: string | undefined;
  let folded: Set<string> | undefined;
  for (const user of users) {
    if (user.content.length > 0 && user.content.every((block) => blocks.has(block))) continue;
    folded ??= foldedUserMessages(request, users);
    if (folded.has(user.id)) continue;
    text ??= JSON.stringify(request);
    const prefix = JSON.stringify(userText(user).slice(0, USER_PREFIX_CHARS)).slice(1, -1);
    if (!text.includes(prefix))
      problems.push(`the user's message ${user.id} is neither in the context nor in its summary`);
  }
  return problems;
}

/**
 * The newest turn is in the request: a tool_result for each of the newest tool results (its start kept, even
 * when the budget cut or saved it), the newest observation's start, and the start and end of the newest
 * message the user wrote (verbatim, quoted whole, or cut in the middle by the budget).
 */
export function checkNewestTurn(request: readonly RequestMessage[], history: readonly Message[]): string[] {
  const turn = findNewestTurn(history);
  const problems: string[] = [];
  let text: string | undefined;
  const contains = (fragment: string) => {
    text ??= JSON.stringify(request);
    return text.includes(JSON.stringify(fragment).slice(1, -1));
  };
  const results = new Map<string, string>();
  for (const message of request) {
    for (const block of contentBlocks(message.content)) {
      if (block.type === "tool_result") results.set(block.tool_use_id, resultText(block));
    }
  }
  for (const message of history) {
    if (!turn.outputMessageIds.has(message.id) || message.role !== "user") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const kept = results.get(block.tool_use_id);
      const head = resultText(block).slice(0, USER_PREFIX_CHARS);
      if (kept === undefined || !kept.includes(head.trimEnd())) {
        problems.push(`the newest tool result ${block.tool_use_id} is not in the request`);
      }
    }
    if (isTextObservation(message) && !contains(userText(message).slice(0, USER_PREFIX_CHARS))) {
      problems.push(`the newest observation ${message.id} is not in the request`);
    }
  }
  const user = turn.userText;
  if (
    user !== undefined &&
    !(contains(user.slice(0, USER_PREFIX_CHARS)) && contains(user.slice(-USER_PREFIX_CHARS)))
  ) {
    problems.push(`the user's newest message ${turn.userMessageId} is not in the request in full`);
  }
  return problems;
}
