import type { BaseMessage } from "@langchain/core/messages";
import { type Runnable, RunnableLambda } from "@langchain/core/runnables";
import type { ContextStatus, HostConversationListener, PrepareResult } from "@unforget/compact";
import type { Message } from "@unforget/core";
import { createLangChainConversation, type LangChainContextOptions } from "./context-middleware.ts";
import { chatModelId, typedError } from "./langchain-summarizer.ts";

/** A runnable of messages to messages (pipe it into a chat model), with a window on what it did. */
export type ContextTrimmer = Runnable<BaseMessage[], BaseMessage[]> & {
  /** The last call's preparation: what each layer did, the count, the status. */
  readonly lastResult: PrepareResult | undefined;
  /** The whole conversation as the manager received it. */
  readonly messages: readonly Message[];
  /** The context status now (cheap). */
  status(): ContextStatus;
  /** After the model refused the messages as too long: reactive compaction, then the messages to send instead. */
  recover(error: unknown): Promise<BaseMessage[]>;
  /** Subscribes to every event; returns the unsubscribe function. */
  on(listener: HostConversationListener): () => void;
};

/**
 * Unforget's context management for LCEL, in the place of `trimMessages`: `trimmer.pipe(model)`. It takes the
 * conversation's messages and returns what to send — the ladder's projection, with a leading `SystemMessage`
 * kept first. Unlike `trimMessages` it keeps state: one trimmer per conversation, given the conversation each
 * call (its whole list, or what the trimmer returned followed by new messages); the usage the `AIMessage`s
 * report anchors its count.
 */
export function createContextTrimmer(options: LangChainContextOptions): ContextTrimmer {
  const conversation = createLangChainConversation(options);
  const providerId = `langchain:${chatModelId(options.model) ?? "model"}`;
  let lastResult: PrepareResult | undefined;
  const runnable = RunnableLambda.from(async (messages: BaseMessage[]) => {
    conversation.append(messages);
    const prepared = await conversation.prepare(options.system ? { system: options.system } : {});
    lastResult = prepared.result;
    return prepared.messages;
  }).withConfig({ runName: "UnforgetContextTrimmer" });
  const extra = {
    get lastResult() {
      return lastResult;
    },
    get messages() {
      return conversation.messages;
    },
    status: () => conversation.status(),
    async recover(error: unknown) {
      const recovered = await conversation.recover(
        typedError(error, providerId),
        options.system ? { system: options.system } : {},
      );
      lastResult = recovered.result;
      return recovered.messages;
    },
    on: (listener: HostConversationListener) => conversation.on(listener),
  };
  return Object.defineProperties(runnable, Object.getOwnPropertyDescriptors(extra)) as ContextTrimmer;
}
