import { randomUUID } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, mkdir, readFile, rename, rm, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { UnforgetError } from "@unforget/core";

/** How `withFileLock` waits for a lock and when it takes one over. */
export interface FileLockOptions {
  /** A lock not refreshed for this long belongs to a holder that died or hung, and is taken over. Default 10 s. */
  staleMs?: number;
  /** Give up after waiting this long for another holder; 0 tries once. Default 30 s. */
  timeoutMs?: number;
}

/** Another holder kept the lock for longer than the caller would wait. */
export class FileLockedError extends UnforgetError {
  /** The lock's path as the caller named it (the lock file is this path with `.lock` added). */
  readonly lockPath: string;

  constructor(message: string, details: { lockPath: string }) {
    super("file_locked", message);
    this.lockPath = details.lockPath;
  }
}

/** What a lock file says about its holder. */
interface LockOwner {
  pid: number;
  host: string;
  token: string;
}

/** The lock files this process holds (file → token), removed if the process exits while holding them. */
const held = new Map<string, string>();
let exitHookInstalled = false;

function releaseHeldOnExit(): void {
  for (const [file, token] of held) {
    try {
      if (readOwnerSync(file)?.token === token) unlinkSync(file);
    } catch {
      // Gone already, or unreadable: nothing of ours to remove.
    }
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    return typeof value.pid === "number" && typeof value.host === "string" && typeof value.token === "string"
      ? { pid: value.pid, host: value.host, token: value.token }
      : undefined;
  } catch {
    return undefined;
  }
}

function readOwnerSync(file: string): LockOwner | undefined {
  return parseOwner(readFileSync(file, "utf8"));
}

async function readOwner(file: string): Promise<LockOwner | undefined> {
  try {
    return parseOwner(await readFile(file, "utf8"));
  } catch {
    // Removed meanwhile, or not a file (a lock folder another tool made): judged by its age alone.
    return undefined;
  }
}

/** Whether process `pid` of this machine still runs (a process of another user counts as running). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/**
 * Takes the lock file if no one holds it: the owner record is written to a file of its own first and linked into
 * place, so the lock appears with its content whole (`link` fails if the lock exists, on every file system).
 */
async function tryCreate(file: string, content: string, token: string): Promise<boolean> {
  const draft = `${file}.${token}`;
  try {
    await writeFile(draft, content, { flag: "wx" });
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(draft, content, { flag: "wx" });
  }
  try {
    await link(draft, file);
    return true;
  } catch (error) {
    if (codeOf(error) === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

/**
 * Removes the lock file when its holder is gone: a process of this machine that no longer runs, or a lock not
 * refreshed for `staleMs`. It is moved aside first and compared with what was judged (same file, same age): a
 * lock that another waiter took over and renewed in between is put back, not removed. True when the caller
 * should try to create the lock again at once.
 */
async function removeIfStale(file: string, staleMs: number): Promise<boolean> {
  let judged: Awaited<ReturnType<typeof stat>>;
  try {
    judged = await stat(file);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return true;
    throw error;
  }
  const owner = await readOwner(file);
  const dead = owner !== undefined && owner.host === hostname() && !isRunning(owner.pid);
  if (!dead && Date.now() - judged.mtimeMs <= staleMs) return false;
  const aside = `${file}.stale-${randomUUID()}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return true;
    throw error;
  }
  const moved = await stat(aside);
  if (moved.ino !== judged.ino || moved.mtimeMs !== judged.mtimeMs) {
    await link(aside, file).catch(() => undefined);
    await rm(aside, { recursive: true, force: true });
    return false;
  }
  await rm(aside, { recursive: true, force: true });
  return true;
}

/**
 * Runs `task` while holding the lock `lockPath` (the file `lockPath.lock`), across processes on one machine: the
 * lock file is created exclusively and names its holder (pid, host); it is refreshed while held, so that a lock
 * whose holder died (its process no longer runs) or stopped refreshing for `staleMs` is taken over. Waiters retry
 * with a growing, jittered pause. The lock is removed when the task settles, and if the process exits holding it.
 * Throws `FileLockedError` when another holder keeps it past `timeoutMs`.
 */
export async function withFileLock<T>(
  lockPath: string,
  task: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const file = `${lockPath}.lock`;
  const token = randomUUID();
  const content = JSON.stringify({ pid: process.pid, host: hostname(), token } satisfies LockOwner);
  const deadline = Date.now() + timeoutMs;
  let pause = 5;
  while (!(await tryCreate(file, content, token))) {
    if (await removeIfStale(file, staleMs)) continue;
    if (Date.now() >= deadline) {
      throw new FileLockedError(
        `Could not lock ${lockPath} within ${timeoutMs} ms: another process holds ${file}. Retry later, or remove that file if no process is using it.`,
        { lockPath },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pause + Math.random() * pause));
    pause = Math.min(100, pause * 2);
  }
  held.set(file, token);
  if (!exitHookInstalled) {
    process.on("exit", releaseHeldOnExit);
    exitHookInstalled = true;
  }
  const refresh = setInterval(
    () => {
      const now = new Date();
      utimes(file, now, now).catch(() => undefined);
    },
    Math.max(100, Math.floor(staleMs / 2)),
  );
  refresh.unref();
  try {
    return await task();
  } finally {
    clearInterval(refresh);
    held.delete(file);
    if ((await readOwner(file))?.token === token) await unlink(file).catch(() => undefined);
  }
}
