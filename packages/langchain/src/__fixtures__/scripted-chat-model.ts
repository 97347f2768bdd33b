import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { estimateMessageTokens } from "@unforget/tokens";
import { fromLangChainMessages } from "../decode-langchain-message.ts";

/** One call the model received. */
export interface ScriptedCall {
  messages: BaseMessage[];
  /** Its size by Unforget's estimate (the usage the model reports for it). */
  tokens: number;
}

/** The size of a call's messages, by Unforget's estimate. */
export function messagesTokens(messages: readonly BaseMessage[]): number {
  return fromLangChainMessages(messages).reduce((sum, message) => sum + estimateMessageTokens(message), 0);
}

/**
 * LangChain's own fake chat model (`fakeModel()` of `@langchain/core/testing`), answering from a script: a tool
 * call or text, with the size of what it received as `usage_metadata`, as a provider would report it. A reply
 * that is an `Error` is thrown, as a provider's refusal would be.
 */
export function createScriptedChatModel(
  reply: (
    messages: BaseMessage[],
    call: number,
  ) => { text: string } | { tool: string; args: Record<string, unknown> } | Error,
  capacity = 1_000,
) {
  const calls: ScriptedCall[] = [];
  const model = fakeModel();
  for (let index = 0; index < capacity; index++) {
    model.respond((messages) => {
      const tokens = messagesTokens(messages);
      calls.push({ messages: [...messages], tokens });
      const next = reply(messages, calls.length);
      if (next instanceof Error) return next;
      const usage_metadata = { input_tokens: tokens, output_tokens: 40, total_tokens: tokens + 40 };
      const id = `run_${calls.length}`;
      if ("text" in next) return new AIMessage({ id, content: next.text, usage_metadata });
      return new AIMessage({
        id,
        content: "",
        tool_calls: [{ id: `call_${calls.length}`, name: next.tool, args: next.args, type: "tool_call" }],
        usage_metadata,
      });
    });
  }
  return { model, calls };
}
