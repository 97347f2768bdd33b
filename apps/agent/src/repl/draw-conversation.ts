import type { Message, ToolUseBlock } from "@unforget/core";
import { describeCall } from "./describe-call.ts";
import { editDiff } from "./edit-diff.ts";
import type { NewHistoryItem } from "./repl-state.ts";

/** Turns drawn again when a session is resumed: enough to see where it stood, few enough to keep the screen. */
export const REDRAWN_TURNS = 3;
/** Tool calls drawn of one redrawn turn, the last ones (a long turn can have hundreds). */
const REDRAWN_TOOL_CALLS = 8;

type Item = NewHistoryItem;

/** A prompt the user typed: a user message with text and no tool results, not one the app added. */
function isPrompt(message: Message): boolean {
  return (
    message.role === "user" &&
    message.isMeta !== true &&
    message.isCompactSummary !== true &&
    message.content.some((block) => block.type === "text") &&
    !message.content.some((block) => block.type === "tool_result")
  );
}

function textOf(message: Message): string {
  return message.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n\n")
    .trim();
}

/** A tool result's content as text, a non-text block as its type in brackets. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((block: { type?: string; text?: string }) =>
        block.type === "text" ? (block.text ?? "") : `[${block.type}]`,
      )
      .join("\n");
  return "";
}

/** A tool call's entry, live or redrawn: its result as text, an edit that succeeded as its change. */
export function toolItem(
  title: string,
  status: string,
  ok: boolean,
  input: Record<string, unknown>,
  content: unknown,
): Item {
  const output = resultText(content);
  const diff = ok ? editDiff(input, output) : undefined;
  return { kind: "tool", title, status, ok, output, ...(diff ? { diff } : {}) };
}

/** One turn as the REPL drew it live: the prompt, each reply's text, each tool call with its result. */
function drawTurn(messages: readonly Message[]): Item[] {
  const items: Item[] = [];
  const calls = new Map<string, ToolUseBlock>();
  const tools: Item[] = [];
  for (const message of messages) {
    if (isPrompt(message)) items.push({ kind: "user", text: textOf(message) });
    else if (message.role === "assistant") {
      const text = textOf(message);
      if (text !== "") items.push({ kind: "assistant", markdown: text });
      for (const block of message.content) if (block.type === "tool_use") calls.set(block.id, block);
    } else if (message.isMeta !== true) {
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        const call = calls.get(block.tool_use_id);
        const input = (call?.input ?? {}) as Record<string, unknown>;
        const tool = toolItem(
          describeCall(call?.name ?? "tool", input),
          "completed",
          block.is_error !== true,
          input,
          block.content,
        );
        tools.push(tool);
        items.push(tool);
      }
    }
  }
  const hidden = tools.length - REDRAWN_TOOL_CALLS;
  if (hidden <= 0) return items;
  // The earliest calls of a long turn give way to a line that counts them.
  const dropped = new Set(tools.slice(0, hidden));
  const kept = items.filter((item) => !dropped.has(item));
  const at = kept.findIndex((item) => item.kind === "tool");
  kept.splice(at, 0, {
    kind: "notice",
    tone: "info",
    text: `⋯ ${hidden} earlier tool call${hidden === 1 ? "" : "s"} of this turn not drawn`,
  });
  return kept;
}

/**
 * What the screen shows of a resumed conversation: the last `REDRAWN_TURNS` turns as they were drawn live,
 * after a line saying how many earlier turns are not drawn (the model has them all, or their summary).
 */
export function drawConversation(messages: readonly Message[]): Item[] {
  const starts = messages.flatMap((message, index) => (isPrompt(message) ? [index] : []));
  if (starts.length === 0) return [];
  const shown = starts.slice(-REDRAWN_TURNS);
  const hidden = starts.length - shown.length;
  const items: Item[] = [];
  if (hidden > 0)
    items.push({
      kind: "notice",
      tone: "info",
      text: `⋯ ${hidden} earlier turn${hidden === 1 ? "" : "s"} not drawn (the model still has them; /context shows the context)`,
    });
  for (const [index, start] of shown.entries())
    items.push(...drawTurn(messages.slice(start, shown[index + 1] ?? messages.length)));
  return items;
}
