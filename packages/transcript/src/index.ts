export type {
  AttachmentEntry,
  CompactBoundaryEntry,
  CompactTrigger,
  ContextEdit,
  CreateTranscriptEntryDefaults,
  HookResultEntry,
  LayerDecisionEntry,
  LayerEdit,
  MessageEntry,
  MetadataEntry,
  PinEntry,
  ReplaceMessageEdit,
  ReplaceMessagesEdit,
  ReplaceToolResultEdit,
  SummaryEntry,
  TranscriptEntry,
  TranscriptEntryInput,
  TranscriptEntryType,
} from "./transcript-entry.ts";
export { createTranscriptEntry, TRANSCRIPT_FORMAT_VERSION } from "./transcript-entry.ts";
export {
  TranscriptCorruptError,
  TranscriptNotFoundError,
  TranscriptReadError,
  TranscriptWriteError,
} from "./transcript-errors.ts";
export type {
  ParsedTranscript,
  TranscriptProblem,
  TranscriptProblemKind,
  UnknownTranscriptEntry,
} from "./transcript-parse.ts";
export { parseTranscript } from "./transcript-parse.ts";
export type { ProjectedContext, TimedLayerEdit } from "./transcript-projection.ts";
export {
  applyLayerEdits,
  extendRequestMessages,
  projectContext,
  projectMessages,
  toRequestMessages,
} from "./transcript-projection.ts";
export type { QuarantinedLine, ReadTranscriptOptions, ReadTranscriptResult } from "./transcript-reader.ts";
export { readTranscript, transcriptQuarantinePath } from "./transcript-reader.ts";
export type {
  StreamTranscriptOptions,
  TranscriptStreamEntry,
  TranscriptStreamItem,
  TranscriptStreamProblem,
} from "./transcript-stream.ts";
export { streamTranscript } from "./transcript-stream.ts";
export type { TranscriptFsyncMode, TranscriptWriterOptions } from "./transcript-writer.ts";
export { TranscriptWriter } from "./transcript-writer.ts";
