// How the benchmarks call a createAgent middleware's `beforeModel` and apply its update, as LangGraph does.
import type { BaseMessage } from "@langchain/core/messages";

/** The update a `beforeModel` hook returned, applied as LangGraph's reducer applies it. */
export function applyUpdate(state: BaseMessage[], update: unknown): BaseMessage[] {
  const messages = (update as { messages?: BaseMessage[] } | undefined)?.messages;
  if (!messages) return state;
  const removeAll = messages.findIndex(
    (message) => message.getType() === "remove" && message.id === "__remove_all__",
  );
  return removeAll >= 0 ? messages.slice(removeAll + 1) : [...state, ...messages];
}

type BeforeModel = (state: { messages: BaseMessage[] }, runtime: unknown) => Promise<unknown>;
export const hookOf = (middleware: { beforeModel?: unknown }): BeforeModel => {
  const hook = middleware.beforeModel;
  return (typeof hook === "function" ? hook : (hook as { hook: BeforeModel }).hook) as BeforeModel;
};
