import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { MemoryLockError } from "../store/memory-errors.ts";
import { isAbsent, storeFileError } from "../store/store-file-errors.ts";
import { withStoreLock } from "../store/store-lock.ts";

/** What the dream remembers between runs: when it last ran, and the sessions that ended since. */
export interface DreamState {
  lastRunAt?: string;
  sessions: string[];
}

/**
 * Where a dream keeps its state, its lock and its reports: a folder next to a memory dir, a table next to a
 * database store. One per store, shared by every process that dreams over it.
 */
export interface DreamStateStore {
  /** Where, for messages (a folder, or the database and namespace). */
  readonly location: string;
  /** The state as last saved; `{ sessions: [] }` before the first. */
  read(): Promise<DreamState>;
  /** Changes the state atomically: concurrent updates (sessions ending in several processes) are never lost. */
  update(change: (state: DreamState) => DreamState): Promise<void>;
  /**
   * Runs `task` holding the dream lock, or resolves `{ locked: false }` at once when a live dream holds it. A
   * lock not released for `staleMs` belongs to a dream that died, and is taken over.
   */
  withDreamLock<T>(
    task: () => Promise<T>,
    staleMs: number,
  ): Promise<{ locked: true; value: T } | { locked: false }>;
  /** Keeps the markdown report of the dream that ran at `at` (ISO); resolves to where it is. */
  saveReport(at: string, markdown: string): Promise<string>;
}

/** A dream's state in a folder (for a memory dir: `<root>/.unforget/dream`): a JSON file, lock folders, reports. */
export function createDreamStateFolder(folder: string): DreamStateStore {
  const statePath = join(folder, "state.json");
  const tempDir = join(folder, ".tmp");
  const read = async (): Promise<DreamState> => {
    let state: DreamState;
    try {
      state = JSON.parse(await readFile(statePath, "utf8")) as DreamState;
    } catch (error) {
      // No dream yet. An unreadable state is an error: `update` would otherwise write a fresh one over it.
      if (isAbsent(error)) return { sessions: [] };
      throw storeFileError("The dream state", statePath, error);
    }
    return {
      sessions: Array.isArray(state.sessions) ? state.sessions : [],
      ...(state.lastRunAt ? { lastRunAt: state.lastRunAt } : {}),
    };
  };
  return {
    location: folder,
    read,
    async update(change) {
      await mkdir(folder, { recursive: true });
      await withStoreLock(join(folder, "state"), async () => {
        await writeFileAtomic(statePath, JSON.stringify(change(await read()), null, 2), { tempDir });
      });
    },
    async withDreamLock(task, staleMs) {
      await mkdir(folder, { recursive: true });
      try {
        const value = await withStoreLock(join(folder, "dream"), task, { staleMs, timeoutMs: 0 });
        return { locked: true, value };
      } catch (error) {
        if (error instanceof MemoryLockError && error.lockPath === join(folder, "dream"))
          return { locked: false };
        throw error;
      }
    },
    async saveReport(at, markdown) {
      const path = join(folder, "reports", `${at.replace(/[:.]/g, "-")}.md`);
      await mkdir(join(folder, "reports"), { recursive: true });
      await writeFileAtomic(path, markdown, { tempDir });
      return path;
    },
  };
}
