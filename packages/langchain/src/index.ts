export type {
  ContextMiddlewareOptions,
  ContextMiddlewareState,
  LangChainContextOptions,
} from "./context-middleware.ts";
export { createContextMiddleware, REMOVE_ALL_MESSAGES } from "./context-middleware.ts";
export type { ContextTrimmer } from "./context-trimmer.ts";
export { createContextTrimmer } from "./context-trimmer.ts";
export type {
  ConvertOptions,
  LangChainBlockStash,
  LangChainMessageStash,
} from "./convert-langchain-messages.ts";
export { fromLangChainMessages, toLangChainMessages } from "./convert-langchain-messages.ts";
export type { LangChainSummarizerOptions, SummaryChatModel } from "./langchain-summarizer.ts";
export { createLangChainSummarizer } from "./langchain-summarizer.ts";
