export {
  HistoryItemNotFoundError,
  HistoryRangeError,
  HistorySessionNotFoundError,
} from "./history-errors.ts";
export type { HistoryItemKind } from "./history-items.ts";
export type { HostHistory, HostHistoryOptions, TranscriptFile } from "./history-source.ts";
export {
  createHistorySource,
  createHostHistory,
  createTranscriptFile,
  HISTORY_TOOLS_NOTE,
} from "./history-source.ts";
export type { HistorySource } from "./history-tools.ts";
export { createHistoryTools } from "./history-tools.ts";
export type {
  HistoryHit,
  HistoryPage,
  HistoryReadOptions,
  HistorySearchOptions,
  OpenHistoryOptions,
  SessionHistory,
} from "./session-history.ts";
export { HISTORY_TOOL_NAMES, openHistory } from "./session-history.ts";
