export type { AiSdkContext, AiSdkContextOptions, PrepareStepInput } from "./ai-sdk-context.ts";
export { createAiSdkContext } from "./ai-sdk-context.ts";
export type { AiSdkSummarizerOptions } from "./ai-sdk-summarizer.ts";
export { createAiSdkSummarizer } from "./ai-sdk-summarizer.ts";
export type { ContextMiddleware } from "./context-middleware.ts";
export { createContextMiddleware } from "./context-middleware.ts";
export { fromModelMessages, toModelMessages } from "./convert-model-messages.ts";
export type { ConvertOptions, MessageStash, PartStash } from "./model-message-parts.ts";
export { DENIED_TOOL_RESULT } from "./model-message-parts.ts";
