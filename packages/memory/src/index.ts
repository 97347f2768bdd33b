export { hashContent } from "./content-hash.ts";
export type { MemoryEntry } from "./memory-catalog.ts";
export type { MemoryDir, MemoryDirOptions } from "./memory-dir.ts";
export { createMemoryDir, DEFAULT_MAX_MEMORY_BYTES } from "./memory-dir.ts";
export {
  MemoryConflictError,
  MemoryFrontmatterError,
  MemoryLimitError,
  MemoryLockError,
  MemoryNotFoundError,
  MemoryPathError,
  MemorySecretError,
} from "./memory-errors.ts";
export type { MemoryFrontmatter, MemorySource, MemoryType, ParsedMemoryFile } from "./memory-frontmatter.ts";
export { formatMemoryFile, MEMORY_TYPES, parseMemoryFile } from "./memory-frontmatter.ts";
export type { LoadedMemoryIndex, MemoryIndexLimits } from "./memory-index.ts";
export {
  MEMORY_INDEX_MAX_BYTES,
  MEMORY_INDEX_MAX_LINES,
  MEMORY_INDEX_NAME,
  truncateMemoryIndex,
} from "./memory-index.ts";
export type { NormalizeMemoryNameOptions } from "./memory-name.ts";
export { MAX_MEMORY_NAME_BYTES, normalizeMemoryName } from "./memory-name.ts";
export type { MemoryRootOptions } from "./memory-root.ts";
export { defaultMemoryRoot } from "./memory-root.ts";
export type { MemoryContent, MemoryStore, MemoryWriteOptions } from "./memory-store.ts";
export type { MemoryVersion, MemoryVersionOperation } from "./memory-versions.ts";
export type { SecretFinding, SecretScanner } from "./secret-scan.ts";
export { createSecretScanner } from "./secret-scan.ts";
export type { StoreLockOptions } from "./store-lock.ts";
export type { TeamMemoryOptions } from "./team-memory.ts";
export { createTeamMemory } from "./team-memory.ts";
