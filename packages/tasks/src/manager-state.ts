import { hostname } from "node:os";
import type { UnforgetError } from "@unforget/core";
import type { Mailbox } from "./mailbox.ts";
import { currentProcessIdentity, isProcessAlive } from "./process-identity.ts";
import type { PromptPattern } from "./prompt-patterns.ts";
import type { TaskEvents } from "./task-events.ts";
import type { TaskOwner, TaskRecord } from "./task-record.ts";
import type { TaskRecords } from "./task-records.ts";
import type { TaskRunner } from "./task-runner.ts";

/** Stall detection settings, resolved. */
export interface StallSettings {
  intervalMs: number;
  quietMs: number;
  tailBytes: number;
  patterns: readonly PromptPattern[];
}

/** A task this manager runs or watches now. */
export interface LiveTask {
  readonly id: string;
  readonly runner: TaskRunner;
  /** Resolves with the final record once the task has ended and been recorded. */
  settled: Promise<TaskRecord>;
  timers: NodeJS.Timeout[];
  /** Output size at the last stall check, when it last changed, and the size a stall was last checked at. */
  stall: { size: number; changedAt: number; checkedSize?: number };
  stopping?: Promise<TaskRecord>;
}

/** What the parts of one manager share. */
export interface ManagerState {
  readonly dir: string;
  readonly records: TaskRecords;
  readonly owner: TaskOwner;
  readonly mailbox: Mailbox;
  readonly events: TaskEvents;
  readonly graceMs: number;
  readonly deadlineMs: number;
  readonly pollMs: number;
  readonly readChunkBytes: number;
  readonly stall: StallSettings;
  readonly reportError: (error: UnforgetError) => void;
  readonly live: Map<string, LiveTask>;
  /** Tasks whose pending notifications this manager delivers. */
  readonly responsible: Set<string>;
  /** Running tasks that another live manager watches; checked on every tick in case it dies. */
  readonly foreign: Set<string>;
  closed: boolean;
}

export function createOwner(managerId: string): TaskOwner {
  return { managerId, ...currentProcessIdentity(), hostname: hostname() };
}

/**
 * True while the manager that owns a record can still watch it. A manager on another host cannot be
 * checked from here and counts as alive: sharing a directory between machines is a queue backend's job.
 */
export function ownerIsAlive(owner: TaskOwner | undefined): boolean {
  if (owner === undefined) return false;
  if (owner.hostname !== hostname()) return true;
  return isProcessAlive(owner);
}
