export type { AttachMemoryOptions, MemorySession } from "./attach-memory.ts";
export { attachMemory, MEMORY_TAP_NAME } from "./attach-memory.ts";
export type { MemoryDir, MemoryDirOptions } from "./dir/memory-dir.ts";
export { createMemoryDir, DEFAULT_MAX_MEMORY_BYTES } from "./dir/memory-dir.ts";
export type { MemoryRootOptions } from "./dir/memory-root.ts";
export { defaultMemoryRoot } from "./dir/memory-root.ts";
export type { DreamAction, DreamJob, DreamOptions, DreamReport } from "./dream/dream.ts";
export { createDreamJob } from "./dream/dream.ts";
export type { DreamState, DreamStateStore } from "./dream/dream-state.ts";
export { createDreamStateFolder } from "./dream/dream-state.ts";
export type { ConsentMode, ExtractionReport, ExtractMemoriesOptions } from "./extract/extract-memories.ts";
export { EXTRACTION_TOOLS, extractMemories, MAX_EXTRACTED_MEMORIES } from "./extract/extract-memories.ts";
export type { MemoryHooks, MemoryProposedEvent, MemoryWrittenEvent } from "./memory-hooks.ts";
export { getMemoryHooks } from "./memory-hooks.ts";
export type { DecayExplanation, DecayOptions } from "./retrieve/memory-decay.ts";
export { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS, explainDecay } from "./retrieve/memory-decay.ts";
export type { PrefilterOptions, ScoredMemory } from "./retrieve/memory-prefilter.ts";
export { prefilterMemories } from "./retrieve/memory-prefilter.ts";
export type {
  MemoryRetriever,
  MemoryRetrieverOptions,
  RecalledMemory,
  RetrievalResult,
  RetrieveOptions,
} from "./retrieve/memory-retriever.ts";
export { createMemoryRetriever, formatRecalledMemories } from "./retrieve/memory-retriever.ts";
export type { SessionMemory, SessionMemoryOptions, SessionNotesUpdate } from "./session/session-memory.ts";
export { createSessionMemory, SESSION_NOTES_EDIT_TOOL } from "./session/session-memory.ts";
export type {
  SessionMemoryThresholds,
  SessionMemoryTriggerState,
  SessionTurnObservation,
  TriggerDecision,
} from "./session/session-memory-trigger.ts";
export {
  DEFAULT_SESSION_MEMORY_THRESHOLDS,
  decideSessionMemoryUpdate,
} from "./session/session-memory-trigger.ts";
export type { NotesBudget } from "./session/session-notes.ts";
export {
  DEFAULT_SESSION_NOTES_PROMPT,
  DEFAULT_SESSION_NOTES_TEMPLATE,
  truncateForCompact,
} from "./session/session-notes.ts";
export { hashContent } from "./store/content-hash.ts";
export type { MemoryEntry } from "./store/memory-catalog.ts";
export { describeMemory, linkSupersession } from "./store/memory-catalog.ts";
export {
  MemoryArgumentError,
  MemoryConflictError,
  MemoryFrontmatterError,
  MemoryLimitError,
  MemoryLockError,
  MemoryNotFoundError,
  MemoryPathError,
  MemorySecretError,
  MemoryStoreError,
} from "./store/memory-errors.ts";
export type {
  MemoryFrontmatter,
  MemorySource,
  MemoryType,
  ParsedMemoryFile,
} from "./store/memory-frontmatter.ts";
export { formatMemoryFile, MEMORY_TYPES, parseMemoryFile } from "./store/memory-frontmatter.ts";
export type { LoadedMemoryIndex, MemoryIndexLimits } from "./store/memory-index.ts";
export {
  formatMemoryIndex,
  MEMORY_INDEX_MAX_BYTES,
  MEMORY_INDEX_MAX_LINES,
  MEMORY_INDEX_NAME,
  memoryIndexPreamble,
  truncateMemoryIndex,
} from "./store/memory-index.ts";
export type { NormalizeMemoryNameOptions } from "./store/memory-name.ts";
export { MAX_MEMORY_NAME_BYTES, normalizeMemoryName } from "./store/memory-name.ts";
export type {
  MemoryProposal,
  ProposalOutcome,
  ProposalQueue,
  ProposedChange,
} from "./store/memory-proposals.ts";
export { applyProposal, createProposalQueue, isProposalId, newProposalId } from "./store/memory-proposals.ts";
export type { MemoryHead, WriteAttempt } from "./store/memory-rules.ts";
export {
  checkExpectedHash,
  checkKeep,
  checkMemoryContent,
  checkNoSecrets,
  checkWriteOptions,
  MEMORY_HASH_PATTERN,
  redactionReason,
  refuseHeadRedaction,
  refuseIndexName,
  replayWrite,
  restoreVersion,
} from "./store/memory-rules.ts";
export type {
  MemoryContent,
  MemoryStore,
  MemoryWriteOptions,
  MemoryWriteResult,
} from "./store/memory-store.ts";
export type {
  MemoryVersion,
  MemoryVersionOperation,
  MemoryVersions,
  RedactOptions,
} from "./store/memory-versions.ts";
export type { StoreLockOptions } from "./store/store-lock.ts";
export type {
  SecretFinding,
  SecretScanner,
  SecretScannerOptions,
  SecretScanResult,
} from "./team/secret-scan.ts";
export { createSecretScanner } from "./team/secret-scan.ts";
export type {
  TeamMemoryFolderOptions,
  TeamMemoryOpenOptions,
  TeamMemoryOptions,
} from "./team/team-memory.ts";
export { createTeamMemory } from "./team/team-memory.ts";
export type { MemoryTool, MemoryToolDefinition, MemoryToolOptions } from "./tool/memory-tool.ts";
export { createMemoryTool, MEMORY_TOOL_INPUT_SCHEMA, MEMORY_TOOL_ROOT } from "./tool/memory-tool.ts";
