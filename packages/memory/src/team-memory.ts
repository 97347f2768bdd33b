import { createMemoryDir, type MemoryDir, type MemoryDirOptions } from "./memory-dir.ts";
import { createSecretScanner, type SecretScanner } from "./secret-scan.ts";

export interface TeamMemoryOptions extends Omit<MemoryDirOptions, "secretScanner"> {
  /** The team's own folder, with its own MEMORY.md (shared through a network drive, a sync tool or git). */
  root: string;
  /** Replaces the default scanner (secretlint's recommended rules plus Unforget's prefix rules). */
  secretScanner?: SecretScanner;
}

/**
 * Team memory: the same store as a memory dir, with every write scanned for secrets (cloud keys, private
 * keys, provider API keys, VCS and chat tokens, JWTs, passwords in URLs) and refused with
 * `MemorySecretError` naming the rule, before anything is written. Several processes may write at once:
 * writes are serialised by the store lock and conditioned on content hashes. A networked store implements
 * the same `MemoryStore` interface, so callers do not change when the team moves to a server.
 */
export async function createTeamMemory(options: TeamMemoryOptions): Promise<MemoryDir> {
  return createMemoryDir({ ...options, secretScanner: options.secretScanner ?? createSecretScanner() });
}
