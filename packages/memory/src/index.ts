export type { AttachMemoryOptions, MemorySession } from "./attach-memory.ts";
export { attachMemory, MEMORY_TAP_NAME } from "./attach-memory.ts";
export { hashContent } from "./content-hash.ts";
export type { DreamAction, DreamJob, DreamOptions, DreamReport } from "./dream.ts";
export { createDreamJob } from "./dream.ts";
export type { DreamState, DreamStateStore } from "./dream-state.ts";
export { createDreamStateFolder } from "./dream-state.ts";
export type { ConsentMode, ExtractionReport, ExtractMemoriesOptions } from "./extract-memories.ts";
export { EXTRACTION_TOOLS, extractMemories, MAX_EXTRACTED_MEMORIES } from "./extract-memories.ts";
export type { MemoryEntry } from "./memory-catalog.ts";
export { describeMemory, linkSupersession } from "./memory-catalog.ts";
export type { DecayExplanation, DecayOptions } from "./memory-decay.ts";
export { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS, explainDecay } from "./memory-decay.ts";
export type { MemoryDir, MemoryDirOptions } from "./memory-dir.ts";
export { createMemoryDir, DEFAULT_MAX_MEMORY_BYTES } from "./memory-dir.ts";
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
} from "./memory-errors.ts";
export type { MemoryFrontmatter, MemorySource, MemoryType, ParsedMemoryFile } from "./memory-frontmatter.ts";
export { formatMemoryFile, MEMORY_TYPES, parseMemoryFile } from "./memory-frontmatter.ts";
export type { MemoryHooks, MemoryProposedEvent, MemoryWrittenEvent } from "./memory-hooks.ts";
export { getMemoryHooks } from "./memory-hooks.ts";
export type { LoadedMemoryIndex, MemoryIndexLimits } from "./memory-index.ts";
export {
  formatMemoryIndex,
  MEMORY_INDEX_MAX_BYTES,
  MEMORY_INDEX_MAX_LINES,
  MEMORY_INDEX_NAME,
  memoryIndexPreamble,
  truncateMemoryIndex,
} from "./memory-index.ts";
export type { NormalizeMemoryNameOptions } from "./memory-name.ts";
export { MAX_MEMORY_NAME_BYTES, normalizeMemoryName } from "./memory-name.ts";
export type { PrefilterOptions, ScoredMemory } from "./memory-prefilter.ts";
export { prefilterMemories } from "./memory-prefilter.ts";
export type { MemoryProposal, ProposalOutcome, ProposalQueue, ProposedChange } from "./memory-proposals.ts";
export { applyProposal, createProposalQueue, isProposalId, newProposalId } from "./memory-proposals.ts";
export type {
  MemoryRetriever,
  MemoryRetrieverOptions,
  RecalledMemory,
  RetrievalResult,
  RetrieveOptions,
} from "./memory-retriever.ts";
export { createMemoryRetriever, formatRecalledMemories } from "./memory-retriever.ts";
export type { MemoryRootOptions } from "./memory-root.ts";
export { defaultMemoryRoot } from "./memory-root.ts";
export type { MemoryHead, WriteAttempt } from "./memory-rules.ts";
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
} from "./memory-rules.ts";
export type { MemoryContent, MemoryStore, MemoryWriteOptions, MemoryWriteResult } from "./memory-store.ts";
export type { MemoryTool, MemoryToolDefinition, MemoryToolOptions } from "./memory-tool.ts";
export { createMemoryTool, MEMORY_TOOL_INPUT_SCHEMA, MEMORY_TOOL_ROOT } from "./memory-tool.ts";
export type {
  MemoryVersion,
  MemoryVersionOperation,
  MemoryVersions,
  RedactOptions,
} from "./memory-versions.ts";
export type {
  SecretFinding,
  SecretScanner,
  SecretScannerOptions,
  SecretScanResult,
} from "./secret-scan.ts";
export { createSecretScanner } from "./secret-scan.ts";
export type { SessionMemory, SessionMemoryOptions, SessionNotesUpdate } from "./session-memory.ts";
export { createSessionMemory, SESSION_NOTES_EDIT_TOOL } from "./session-memory.ts";
export type {
  SessionMemoryThresholds,
  SessionMemoryTriggerState,
  SessionTurnObservation,
  TriggerDecision,
} from "./session-memory-trigger.ts";
export { DEFAULT_SESSION_MEMORY_THRESHOLDS, decideSessionMemoryUpdate } from "./session-memory-trigger.ts";
export type { NotesBudget } from "./session-notes.ts";
export {
  DEFAULT_SESSION_NOTES_PROMPT,
  DEFAULT_SESSION_NOTES_TEMPLATE,
  truncateForCompact,
} from "./session-notes.ts";
export type { StoreLockOptions } from "./store-lock.ts";
export type {
  TeamMemoryFolderOptions,
  TeamMemoryOpenOptions,
  TeamMemoryOptions,
} from "./team-memory.ts";
export { createTeamMemory } from "./team-memory.ts";
