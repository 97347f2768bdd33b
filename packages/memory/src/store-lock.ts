import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import lockfile from "proper-lockfile";
import { MemoryLockError } from "./memory-errors.ts";

export interface StoreLockOptions {
  /** A lock not refreshed for this long belongs to a dead process and is taken over. Default 10 s. */
  staleMs?: number;
  /** Give up after waiting this long for another holder. Default 30 s. */
  timeoutMs?: number;
}

/**
 * Runs `task` while holding the lock at `lockPath`, across processes on one machine (a lock folder created
 * atomically and refreshed while held; a holder that died leaves a lock that goes stale). Throws
 * `MemoryLockError` when the lock cannot be had within `timeoutMs`.
 */
export async function withStoreLock<T>(
  lockPath: string,
  task: () => Promise<T>,
  options: StoreLockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  await mkdir(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  let release: (() => Promise<void>) | undefined;
  let wait = 5;
  while (!release) {
    try {
      release = await lockfile.lock(lockPath, {
        realpath: false,
        stale: staleMs,
        update: Math.max(1_000, Math.floor(staleMs / 2)),
        retries: 0,
        // A lock can only be compromised if this process stalled past `staleMs`; the write that holds it
        // still finishes, and the compare-and-swap check of the next writer catches any overlap.
        onCompromised: () => undefined,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED" || Date.now() >= deadline) {
        throw new MemoryLockError(
          `Could not lock ${lockPath} within ${timeoutMs} ms (${(error as Error).message}); another writer holds it. Retry later, or remove the lock folder if no process is using this memory.`,
          { lockPath, cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
      wait = Math.min(100, wait * 2);
    }
  }
  try {
    return await task();
  } finally {
    await release().catch(() => undefined);
  }
}
