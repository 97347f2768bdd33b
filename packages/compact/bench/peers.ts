import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  ToolMessage,
  trimMessages,
} from "@langchain/core/messages";
import type { ContentBlock, Message, ToolResultBlock } from "@unforget/core";
import { estimateMessageTokens } from "@unforget/tokens";
import { type AssistantContent, type ModelMessage, pruneMessages, type ToolResultPart } from "ai";
import type { ContextManager } from "../src/index.ts";
import { baselineManager } from "./baselines.ts";

/**
 * The peers, run as their real packages: LangChain's `trimMessages` (@langchain/core) and the AI SDK's
 * `pruneMessages` (ai), each called before every model call on the whole conversation, as their docs show.
 * Our messages are converted to theirs (each part carrying our message's id), their answer converted back by
 * those ids: what they kept is sent, byte for byte as recorded. Neither changes the messages it is given.
 */

const resultText = (block: ToolResultBlock) =>
  typeof block.content === "string"
    ? block.content
    : block.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
const textOf = (blocks: readonly ContentBlock[]) =>
  blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");

/** The parts of our messages that survived, by id: `${id}` for the message's own text, `${id}#${tool_use_id}` for a tool result. */
function rebuild(
  history: readonly Message[],
  kept: ReadonlySet<string>,
  calls: ReadonlySet<string>,
): Message[] {
  const out: Message[] = [];
  for (const message of history) {
    if (message.role === "assistant") {
      if (!kept.has(message.id)) continue;
      const content = message.content.filter((block) => block.type !== "tool_use" || calls.has(block.id));
      if (content.length > 0)
        out.push(content.length === message.content.length ? message : { ...message, content });
      continue;
    }
    const content = message.content.filter((block) =>
      block.type === "tool_result" ? kept.has(`${message.id}#${block.tool_use_id}`) : kept.has(message.id),
    );
    if (content.length > 0)
      out.push(content.length === message.content.length ? message : { ...message, content });
  }
  return out;
}

/** How many tokens a part of one of our messages counts (our estimate, so that every policy counts alike). */
function partTokens(message: Message, blocks: ContentBlock[]): number {
  return estimateMessageTokens({ ...message, content: blocks });
}

/**
 * LangChain's `trimMessages` as a LangChain agent uses it before each call: the last messages that fit
 * `maxTokens` (the window less the output reserve, the system prompt and the tools), starting on a human
 * message and ending on a human or tool message, never splitting a message. Counted with our estimate.
 */
export function createTrimMessagesPeer(maxTokens: number): ContextManager {
  const converted = new WeakMap<Message, BaseMessage[]>();
  const tokens = new Map<string, number>();
  const toLangChain = (message: Message): BaseMessage[] => {
    const known = converted.get(message);
    if (known) return known;
    const parts: BaseMessage[] = [];
    if (message.role === "assistant") {
      const calls = message.content.flatMap((block) =>
        block.type === "tool_use"
          ? [{ id: block.id, name: block.name, args: (block.input ?? {}) as Record<string, unknown> }]
          : [],
      );
      parts.push(new AIMessage({ id: message.id, content: textOf(message.content), tool_calls: calls }));
      tokens.set(message.id, partTokens(message, message.content));
    } else {
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        const id = `${message.id}#${block.tool_use_id}`;
        parts.push(new ToolMessage({ id, content: resultText(block), tool_call_id: block.tool_use_id }));
        tokens.set(id, partTokens(message, [block]));
      }
      const rest = message.content.filter((block) => block.type !== "tool_result");
      if (rest.length > 0) {
        parts.push(new HumanMessage({ id: message.id, content: textOf(rest) || "[media]" }));
        tokens.set(message.id, partTokens(message, rest));
      }
    }
    converted.set(message, parts);
    return parts;
  };
  const tokenCounter = (messages: BaseMessage[]) =>
    messages.reduce((sum, message) => sum + (tokens.get(message.id ?? "") ?? 0), 0);
  return baselineManager(
    maxTokens,
    async (history) => {
      const trimmed = await trimMessages(history.flatMap(toLangChain), {
        maxTokens,
        strategy: "last",
        tokenCounter,
        startOn: "human",
        endOn: ["human", "tool"],
        allowPartial: false,
      });
      const kept = new Set(trimmed.map((message) => message.id ?? ""));
      const calls = new Set(
        trimmed.flatMap((message) => (message instanceof ToolMessage ? [message.tool_call_id] : [])),
      );
      return rebuild(history, kept, calls);
    },
    { recover: "none", stateless: true },
  );
}

/**
 * The AI SDK's `pruneMessages` as its docs use it in `prepareStep`: reasoning before the last message and
 * tool calls (with their results) before the last two messages removed, empty messages dropped. It counts no
 * tokens: it keeps every user message and every text reply, so it cannot stop a long session overflowing.
 */
export function createPruneMessagesPeer(): ContextManager {
  const converted = new WeakMap<Message, ModelMessage[]>();
  const toModel = (message: Message): ModelMessage[] => {
    const known = converted.get(message);
    if (known) return known;
    const providerOptions = { unforget: { id: message.id } };
    const parts: ModelMessage[] = [];
    if (message.role === "assistant") {
      const content: Exclude<AssistantContent, string> = [];
      for (const block of message.content) {
        if (block.type === "text") content.push({ type: "text", text: block.text });
        else if (block.type === "thinking") content.push({ type: "reasoning", text: block.thinking });
        else if (block.type === "tool_use")
          content.push({
            type: "tool-call",
            toolCallId: block.id,
            toolName: block.name,
            input: block.input ?? {},
          });
      }
      parts.push({ role: "assistant", content, providerOptions });
    } else {
      const results: ToolResultPart[] = message.content.flatMap((block) =>
        block.type === "tool_result"
          ? [
              {
                type: "tool-result",
                toolCallId: block.tool_use_id,
                toolName: "tool",
                output: { type: "text", value: resultText(block) },
              },
            ]
          : [],
      );
      if (results.length > 0) parts.push({ role: "tool", content: results, providerOptions });
      const rest = message.content.filter((block) => block.type !== "tool_result");
      if (rest.length > 0)
        parts.push({
          role: "user",
          content: [{ type: "text", text: textOf(rest) || "[media]" }],
          providerOptions,
        });
    }
    converted.set(message, parts);
    return parts;
  };
  return baselineManager(
    0,
    (history) => {
      const pruned = pruneMessages({
        messages: history.flatMap(toModel),
        reasoning: "before-last-message",
        toolCalls: "before-last-2-messages",
        emptyMessages: "remove",
      });
      const kept = new Set<string>();
      const calls = new Set<string>();
      for (const message of pruned) {
        const id = String((message.providerOptions?.unforget as { id?: string } | undefined)?.id ?? "");
        if (message.role === "tool") {
          for (const part of message.content)
            if (part.type === "tool-result") {
              kept.add(`${id}#${part.toolCallId}`);
              calls.add(part.toolCallId);
            }
        } else kept.add(id);
      }
      return rebuild(history, kept, calls);
    },
    { recover: "none", stateless: true },
  );
}
