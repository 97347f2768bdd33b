import { isDeepStrictEqual } from "node:util";
import type { HostCodec } from "@unforget/compact";
import type { ModelMessage } from "ai";
import { decodeModelMessage } from "./decode-model-message.ts";
import { encodeModelMessage } from "./encode-model-message.ts";

/**
 * The AI SDK's messages for a host conversation: converted losslessly both ways; two messages are the same
 * when deeply equal (the AI SDK's messages carry no ids); leading system messages are the system prompt.
 * Knows each tool call's name, for results it writes that do not carry one.
 */
export function createModelMessageCodec(): HostCodec<ModelMessage> {
  const toolNames = new Map<string, string>();
  return {
    decode(message, context) {
      const decoded = decodeModelMessage(message, context.reportUnknownShape);
      for (const block of decoded.content) if (block.type === "tool_use") toolNames.set(block.id, block.name);
      return decoded;
    },
    encode: (message, context) => encodeModelMessage(message, context.reportUnknownShape, toolNames),
    equal: (a, b) => isDeepStrictEqual(a, b),
    systemText: (message) =>
      message.role === "system" && typeof message.content === "string" ? message.content : undefined,
  };
}
