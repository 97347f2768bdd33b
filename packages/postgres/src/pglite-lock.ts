import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { StoreLockedError } from "./postgres-errors.ts";

/** Who holds a data dir: enough to tell a live holder from a dead one, and to name it. */
interface LockHolder {
  pid: number;
  host: string;
  /** When the holding process started (ISO), for people. */
  startedAt: string;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): tells a reused pid apart. */
  startTicks: string | null;
}

function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockHolder): boolean {
  // A holder on another machine (a shared folder) cannot be checked: it counts as alive.
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  // The pid runs; it is the holder unless it started at another time (the pid was reused).
  const ticks = processStartTicks(holder.pid);
  return holder.startTicks === null || ticks === null || ticks === holder.startTicks;
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockHolder;
  } catch {
    return undefined;
  }
}

const held = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A process that exits without closing (a crash of the caller's code, process.exit) still lets go.
  process.on("exit", () => {
    for (const path of held) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    }
  });
}

/** The lock of one data dir, held by this process until `release`. */
export interface DataDirLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes the lock of a PGlite data dir: a file `<dataDir>.lock` created with O_EXCL (by a hard link, so that it
 * appears whole), holding the pid, host and start time of its process. A lock whose process is gone (or
 * whose pid now belongs to another process) is taken over; a live holder's never is: the caller gets
 * `StoreLockedError` naming it.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const path = `${dataDir}.lock`;
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date(Date.now() - process.uptime() * 1_000).toISOString(),
    startTicks: processStartTicks(process.pid),
  };
  const draft = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  const descriptor = openSync(draft, "wx", 0o644);
  try {
    writeSync(descriptor, JSON.stringify(me));
  } finally {
    closeSync(descriptor);
  }
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(draft, path);
        held.add(path);
        installExitHook();
        return {
          path,
          async release() {
            if (!held.delete(path)) return;
            const current = await readFile(path, "utf8").catch(() => "");
            if (current === JSON.stringify(me)) unlinkSync(path);
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = readHolder(path);
      if (holder && isAlive(holder)) throw lockedError(dataDir, holder, held.has(path));
      takeOverStale(path, holder);
    }
    const holder = readHolder(path);
    throw lockedError(dataDir, holder ?? { ...me, pid: -1 }, false);
  } finally {
    try {
      unlinkSync(draft);
    } catch {
      // Nothing to clean.
    }
  }
}

/**
 * Moves a dead holder's lock aside. If another process replaced it in between (its lock is now the one moved),
 * it is put back at once, so that a live holder never loses its lock.
 */
function takeOverStale(path: string, judged: LockHolder | undefined): void {
  const aside = `${path}.stale.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  const moved = readHolder(aside);
  if (judged !== undefined && JSON.stringify(moved) !== JSON.stringify(judged)) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process took the free slot; the loop reads and judges it.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // Already gone.
  }
}

function lockedError(dataDir: string, holder: LockHolder, ownProcess: boolean): StoreLockedError {
  const who = `process ${holder.pid} on ${holder.host}, started ${holder.startedAt}`;
  const message = ownProcess
    ? `The PGlite data dir ${dataDir} is already open in this process; share that one client (createSqlClient once per data dir) instead of opening it twice.`
    : `The PGlite data dir ${dataDir} is open in ${who}. PGlite serves one process per data dir (two would lose writes), so this one was not opened. Stop that process, or share memory between processes through a PostgreSQL server (createSqlClient({ url })) or the directory store (createMemoryDir), which any number of processes may open.`;
  return new StoreLockedError(message, {
    dataDir,
    holder: { pid: holder.pid, host: holder.host, startedAt: holder.startedAt },
  });
}
