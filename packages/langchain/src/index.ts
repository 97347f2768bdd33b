export type {
  ContextMiddlewareOptions,
  ContextMiddlewareState,
  LangChainContextOptions,
} from "./context-middleware.ts";
export { createContextMiddleware, REMOVE_ALL_MESSAGES } from "./context-middleware.ts";
export type { ContextTrimmer } from "./context-trimmer.ts";
export { createContextTrimmer } from "./context-trimmer.ts";
export { fromLangChainMessages } from "./decode-langchain-message.ts";
export { toLangChainMessages } from "./encode-langchain-message.ts";
export type {
  ConvertOptions,
  LangChainBlockStash,
  LangChainMessageStash,
} from "./langchain-parts.ts";
export type { LangChainSummarizerOptions, SummaryChatModel } from "./langchain-summarizer.ts";
export { createLangChainSummarizer } from "./langchain-summarizer.ts";
