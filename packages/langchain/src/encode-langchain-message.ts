import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  HumanMessageChunk,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
  type UsageMetadata,
} from "@langchain/core/messages";
import type { Message, ToolResultBlock, Usage } from "@unforget/core";
import { isRecord } from "./is-record.ts";
import { encodeBlock, encodeToolContent } from "./langchain-blocks.ts";
import {
  type Block,
  giveFlags,
  type LangChainMessageStash,
  OPAQUE_MESSAGE,
  stashOf,
} from "./langchain-parts.ts";

function usageMetadata(usage: Usage): UsageMetadata {
  const input = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  return {
    input_tokens: input,
    output_tokens: usage.outputTokens,
    total_tokens: input + usage.outputTokens,
    input_token_details: {
      cache_read: usage.cacheReadInputTokens,
      cache_creation: usage.cacheCreationInputTokens,
    },
  };
}

export type Fields = Record<string, unknown> & { content: unknown };

function build(type: string, chunk: boolean, fields: Fields): BaseMessage {
  switch (type) {
    case "ai":
      return chunk ? new AIMessageChunk(fields as never) : new AIMessage(fields as never);
    case "tool":
      return chunk ? new ToolMessageChunk(fields as never) : new ToolMessage(fields as never);
    case "system":
      return chunk ? new SystemMessageChunk(fields as never) : new SystemMessage(fields as never);
    case "generic":
      return new ChatMessage(fields as never);
    case "function":
      return new FunctionMessage(fields as never);
    default:
      return chunk ? new HumanMessageChunk(fields as never) : new HumanMessage(fields as never);
  }
}

/** Content as LangChain holds it: a string when it was one (or, for a new message, one plain text), else blocks. */
function contentOf(blocks: Block[], stash: LangChainMessageStash | undefined): string | Block[] {
  const plain = blocks.length === 1 && blocks[0]!.type === "text" && Object.keys(blocks[0]!).length === 2;
  const asString = stash ? stash.text === true : true;
  if (asString && blocks.length === 0) return "";
  // A new message's one plain text goes as a string, unless it is empty (that string would read back as no block).
  if (asString && plain && (stash !== undefined || blocks[0]!.text !== "")) return String(blocks[0]!.text);
  return blocks;
}

/**
 * An Unforget message as LangChain messages: one, or several when a user message holds tool results (one
 * `ToolMessage` each, then a `HumanMessage` with the rest).
 */
export function encodeLangChainMessage(message: Message): BaseMessage[] {
  const only = message.content.length === 1 ? message.content[0] : undefined;
  if (only?.type === "unknown" && only.original.type === OPAQUE_MESSAGE)
    return [only.original.message as BaseMessage];
  const stash = isRecord(message.metadata?.langchain)
    ? (message.metadata.langchain as unknown as LangChainMessageStash)
    : undefined;
  const fields: Record<string, unknown> = stash ? { ...stash.fields } : { id: message.id };
  giveFlags(fields, message, stash);
  if (message.role === "assistant") {
    const toolCalls: { call: Record<string, unknown>; index: number }[] = [];
    const content: Block[] = [];
    for (const block of message.content) {
      if (block.type === "tool_use") {
        const blockStash = stashOf(block);
        // A LangChain message's tool-use blocks came from its content unless marked call-only, and are in its
        // tool_calls when marked so; a new message's (a summary's, an Unforget one's) are tool_calls only.
        const inCalls = stash ? blockStash.toolCall !== undefined : true;
        const inContent = stash ? !blockStash.callOnly : false;
        if (inCalls) {
          const call: Record<string, unknown> = stash ? { ...blockStash.toolCall } : { type: "tool_call" };
          call.name = block.name;
          call.args = blockStash.args ?? block.input;
          if (!blockStash.noId) call.id = block.id;
          toolCalls.push({ call, index: blockStash.callIndex ?? toolCalls.length });
        }
        if (!inContent) continue;
      }
      content.push(encodeBlock(block));
    }
    if (!stash && message.usage) fields.usage_metadata = usageMetadata(message.usage);
    return [
      build("ai", stash?.chunk === true, {
        ...fields,
        content: contentOf(content, stash),
        tool_calls: toolCalls.sort((a, b) => a.index - b.index).map((entry) => entry.call),
      }),
    ];
  }
  const results = message.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
  const rest = message.content.filter((block) => block.type !== "tool_result");
  if (stash?.type === "tool" && results.length === 1 && rest.length === 0) {
    const result = results[0]!;
    const toolFields: Fields = {
      ...fields,
      content: encodeToolContent(result.content),
      tool_call_id: result.tool_use_id,
    };
    if (result.is_error) toolFields.status = "error";
    else if (toolFields.status === "error") delete toolFields.status;
    return [build("tool", stash.chunk === true, toolFields)];
  }
  const out: BaseMessage[] = results.map(
    (result, index) =>
      new ToolMessage({
        id: index === 0 && rest.length === 0 ? String(fields.id) : `${message.id}_${index}`,
        content: encodeToolContent(result.content) as string,
        tool_call_id: result.tool_use_id,
        ...(result.is_error ? { status: "error" as const } : {}),
      }),
  );
  if (rest.length > 0 || results.length === 0) {
    const type = stash && stash.type !== "tool" ? stash.type : "human";
    const content = contentOf(rest.map(encodeBlock), stash?.type === "tool" ? undefined : stash);
    out.push(build(type, stash?.chunk === true, { ...fields, content }));
  }
  return out;
}

/** Unforget messages as LangChain messages: the inverse of `fromLangChainMessages`, and LangChain's own shapes for new ones. */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  return messages.flatMap((message) => encodeLangChainMessage(message));
}
