import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  type AIMessage,
  type BaseMessage,
  isBaseMessage,
  isBaseMessageChunk,
  type ToolMessage,
  type UsageMetadata,
} from "@langchain/core/messages";
import {
  type ContentBlock,
  createMessage,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  type Usage,
} from "@unforget/core";
import { isRecord } from "./is-record.ts";
import { decodeBlock, decodeToolContent } from "./langchain-blocks.ts";
import type { ConvertOptions } from "./langchain-parts.ts";
import {
  type LangChainMessageStash,
  MESSAGE_FIELDS,
  OPAQUE_MESSAGE,
  omit,
  type Report,
  stashOf,
  takeFlags,
  withStash,
} from "./langchain-parts.ts";

function usageFromLangChain(message: BaseMessage & { usage_metadata?: UsageMetadata }): Usage | undefined {
  const metadata = message.usage_metadata;
  if (isRecord(metadata) && typeof metadata.input_tokens === "number") {
    const details = isRecord(metadata.input_token_details) ? metadata.input_token_details : {};
    const read = typeof details.cache_read === "number" ? details.cache_read : 0;
    const write = typeof details.cache_creation === "number" ? details.cache_creation : 0;
    return {
      inputTokens: Math.max(0, metadata.input_tokens - read - write),
      outputTokens: typeof metadata.output_tokens === "number" ? metadata.output_tokens : 0,
      cacheCreationInputTokens: write,
      cacheReadInputTokens: read,
    };
  }
  // Integrations that only fill the provider's raw usage: Anthropic's shape, then OpenAI's legacy one.
  const raw = isRecord(message.response_metadata) ? message.response_metadata : {};
  const usage = isRecord(raw.usage) ? raw.usage : undefined;
  if (usage && typeof usage.input_tokens === "number") {
    const number = (value: unknown) => (typeof value === "number" ? value : 0);
    return {
      inputTokens: usage.input_tokens,
      outputTokens: number(usage.output_tokens),
      cacheCreationInputTokens: number(usage.cache_creation_input_tokens),
      cacheReadInputTokens: number(usage.cache_read_input_tokens),
    };
  }
  const legacy = isRecord(raw.tokenUsage) ? raw.tokenUsage : undefined;
  if (legacy && typeof legacy.promptTokens === "number") {
    return {
      inputTokens: legacy.promptTokens,
      outputTokens: typeof legacy.completionTokens === "number" ? legacy.completionTokens : 0,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    };
  }
  return undefined;
}

function fieldsOf(message: BaseMessage): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of MESSAGE_FIELDS) {
    const value: unknown = Reflect.get(message, key);
    if (value === undefined) continue;
    if (isRecord(value) && Object.keys(value).length === 0 && key !== "artifact") continue;
    if (Array.isArray(value) && value.length === 0 && key === "invalid_tool_calls") continue;
    fields[key] = value;
  }
  return fields;
}

/** One LangChain message as an Unforget message (its id, its fields in `metadata.langchain`). */
export function decodeLangChainMessage(message: BaseMessage, report: Report = () => {}): Message {
  const type = isBaseMessage(message) ? message.getType() : undefined;
  if (
    !isBaseMessage(message) ||
    !["human", "ai", "tool", "system", "generic", "function"].includes(type ?? "")
  ) {
    const shape = isBaseMessage(message) ? `message type ${type}` : "a value that is not a LangChain message";
    report(shape, `${isBaseMessage(message) ? `a message of type ${type}` : shape} was kept as it is`);
    return createMessage("user", [{ type: "unknown", original: { type: OPAQUE_MESSAGE, message } }], {
      isMeta: true,
    });
  }
  const stash: LangChainMessageStash = { type: type!, fields: fieldsOf(message) };
  const flags = takeFlags(stash.fields);
  if (isBaseMessageChunk(message)) stash.chunk = true;
  const content = message.content as unknown;
  if (typeof content === "string") stash.text = true;
  const role = type === "ai" ? "assistant" : "user";
  let blocks: ContentBlock[];
  if (type === "tool") {
    const result: ToolResultBlock = {
      type: "tool_result",
      tool_use_id: String((message as ToolMessage).tool_call_id),
      content: decodeToolContent(content, report),
    };
    if ((message as ToolMessage).status === "error") result.is_error = true;
    blocks = [result];
  } else {
    blocks =
      typeof content === "string"
        ? content.length > 0
          ? [{ type: "text", text: content }]
          : []
        : Array.isArray(content)
          ? content.map((block) => decodeBlock(block, type!, report))
          : [];
    if (type === "ai") blocks = withToolCalls(blocks, (message as AIMessage).tool_calls ?? []);
  }
  const init: Parameters<typeof createMessage>[2] = { metadata: { langchain: stash } };
  if (typeof message.id === "string") init.id = message.id;
  if (type === "system" || type === "generic" || type === "function") init.isMeta = true;
  for (const flag of flags) init[flag] = true;
  if (type === "ai") {
    const usage = usageFromLangChain(message);
    if (usage) init.usage = usage;
    const metadata = isRecord(message.response_metadata) ? message.response_metadata : {};
    const responseId = typeof metadata.id === "string" ? metadata.id : message.id;
    if (typeof responseId === "string") init.responseId = responseId;
    const model = metadata.model_name ?? metadata.model;
    if (typeof model === "string") init.model = model;
  }
  return createMessage(role, blocks, init);
}

/** The content's tool-use blocks joined with the message's `tool_calls`: each call once, its fields kept. */
function withToolCalls(blocks: ContentBlock[], toolCalls: readonly unknown[]): ContentBlock[] {
  const out = [...blocks];
  for (const [callIndex, call] of toolCalls.entries()) {
    if (!isRecord(call) || typeof call.name !== "string") continue;
    const extra = omit(call, ["id", "name", "args"]) ?? {};
    const index =
      typeof call.id === "string"
        ? out.findIndex(
            (block) => block.type === "tool_use" && block.id === call.id && !stashOf(block).toolCall,
          )
        : -1;
    if (index >= 0) {
      const block = out[index] as ToolUseBlock;
      out[index] = withStash(block, {
        ...stashOf(block),
        toolCall: extra,
        callIndex,
        ...(isDeepStrictEqual(block.input, call.args) ? {} : { args: call.args }),
      });
    } else {
      const id = typeof call.id === "string" ? call.id : `toolu_langchain_${randomUUID()}`;
      out.push(
        withStash<ToolUseBlock>(
          { type: "tool_use", id, name: call.name, input: call.args },
          {
            toolCall: extra,
            callIndex,
            callOnly: true,
            ...(typeof call.id === "string" ? {} : { noId: true }),
          },
        ),
      );
    }
  }
  return out;
}

/**
 * LangChain messages as Unforget messages, losing nothing: content blocks (LangChain's standard ones and the
 * providers' own), tool calls and invalid ones, tool messages with their status and artifact,
 * `additional_kwargs`, `response_metadata`, `usage_metadata` (which becomes the usage counts anchor on). What
 * this version does not model is kept as it is.
 */
export function fromLangChainMessages(
  messages: readonly BaseMessage[],
  options: ConvertOptions = {},
): Message[] {
  const report = options.onUnknownShape ?? (() => {});
  return messages.map((message) => decodeLangChainMessage(message, report));
}
