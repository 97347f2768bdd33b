export type {
  ConvertOptions,
  LangChainBlockStash,
  LangChainMessageStash,
} from "./convert-langchain-messages.ts";
export { fromLangChainMessages, toLangChainMessages } from "./convert-langchain-messages.ts";
