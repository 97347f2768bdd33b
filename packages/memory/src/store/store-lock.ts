import { FileLockedError, withFileLock } from "@unforget/files";
import { MemoryLockError } from "./memory-errors.ts";

export interface StoreLockOptions {
  /** A lock not refreshed for this long belongs to a dead process and is taken over. Default 10 s. */
  staleMs?: number;
  /** Give up after waiting this long for another holder. Default 30 s. */
  timeoutMs?: number;
}

/**
 * Runs `task` while holding the lock at `lockPath`, across processes on one machine (`withFileLock` of
 * `@unforget/files`: a lock file created exclusively, naming its holder and refreshed while held; the lock of a
 * holder that died is taken over). Throws `MemoryLockError` when the lock cannot be had within `timeoutMs`.
 */
export async function withStoreLock<T>(
  lockPath: string,
  task: () => Promise<T>,
  options: StoreLockOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    return await withFileLock(lockPath, task, { staleMs: options.staleMs ?? 10_000, timeoutMs });
  } catch (error) {
    // Only the lock's own refusal: whatever `task` throws goes through as it is.
    if (!(error instanceof FileLockedError) || error.lockPath !== lockPath) throw error;
    throw new MemoryLockError(
      `Could not lock ${lockPath} within ${timeoutMs} ms; another writer holds it. Retry later, or remove ${lockPath}.lock if no process is using this memory.`,
      { lockPath, cause: error },
    );
  }
}
