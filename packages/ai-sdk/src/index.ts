export type { ConvertOptions, MessageStash, PartStash } from "./convert-model-messages.ts";
export { DENIED_TOOL_RESULT, fromModelMessages, toModelMessages } from "./convert-model-messages.ts";
