import { isDeepStrictEqual } from "node:util";
import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import type { HostCodec } from "@unforget/compact";
import { decodeLangChainMessage } from "./decode-langchain-message.ts";
import { encodeLangChainMessage } from "./encode-langchain-message.ts";

/**
 * LangChain's messages for a host conversation: converted losslessly both ways; two messages are the same when
 * they have the same id and type (LangGraph gives every message in an agent's state an id), or, without ids,
 * the same content; a leading `SystemMessage` is the system prompt.
 */
export const langChainCodec: HostCodec<BaseMessage> = {
  decode: (message, context) => decodeLangChainMessage(message, context.reportUnknownShape),
  encode: (message) => encodeLangChainMessage(message),
  equal(a, b) {
    if (!isBaseMessage(a) || !isBaseMessage(b) || a.getType() !== b.getType()) return false;
    if (typeof a.id === "string" && typeof b.id === "string") return a.id === b.id;
    return (
      isDeepStrictEqual(a.content, b.content) &&
      isDeepStrictEqual(
        (a as { tool_calls?: unknown }).tool_calls,
        (b as { tool_calls?: unknown }).tool_calls,
      ) &&
      (a as { tool_call_id?: unknown }).tool_call_id === (b as { tool_call_id?: unknown }).tool_call_id
    );
  },
  systemText: (message) =>
    isBaseMessage(message) && message.getType() === "system" ? message.text : undefined,
};
