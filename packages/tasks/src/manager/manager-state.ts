import { hostname } from "node:os";
import type { UnforgetError } from "@unforget/core";
import { currentProcessIdentity, type ProcessIdentity } from "@unforget/process";
import type { TaskBackend, TaskOutputShipper } from "../backend/task-backend.ts";
import type { PromptPattern } from "../lifecycle/prompt-patterns.ts";
import type { Mailbox } from "../mailbox/mailbox.ts";
import { TaskStateError } from "../task/task-errors.ts";
import type { TaskOwner, TaskRecord } from "../task/task-record.ts";
import type { TaskCapabilities } from "../types/task-capabilities.ts";
import type { TaskRunner } from "../types/task-runner.ts";
import type { TaskTypeRegistry } from "../types/task-type.ts";
import type { TaskEvents } from "./task-events.ts";
import type { TaskRecords } from "./task-records.ts";

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
  /** The attempt it runs, for a task a queue may run again: its records are fenced by it. */
  readonly attempt?: number;
  /** Epoch milliseconds when this manager began to run or watch it. */
  readonly startedAt: number;
  readonly runner: TaskRunner;
  /** Resolves with the final record once the task has ended and been recorded. */
  settled: Promise<TaskRecord>;
  timers: NodeJS.Timeout[];
  /** Output size at the last stall check, when it last changed, and the size a stall was last checked at. */
  stall: { size: number; changedAt: number; checkedSize?: number };
  stopping?: Promise<TaskRecord>;
  /** Set once this manager lost the task's lease: it no longer records anything about it. */
  relinquished?: boolean;
  /** Ships the output to a remote store while the task runs here (a backend whose file is not the store). */
  shipper?: TaskOutputShipper;
}

/** What the parts of one manager share. */
export interface ManagerState {
  /** Where the tasks this manager runs keep their folders; undefined when it only queues tasks. */
  readonly dir: string | undefined;
  /** Where everything shared lives: records, output, leases, commands, mailbox (and a queue). */
  readonly backend: TaskBackend;
  /** The types this manager starts. */
  readonly types: TaskTypeRegistry;
  /** What the application gave for the types that need it (the MCP client). */
  readonly capabilities: TaskCapabilities;
  /** The session whose notifications this manager delivers ("" for none in particular). */
  readonly sessionId: string;
  readonly records: TaskRecords;
  readonly owner: TaskOwner;
  readonly mailbox: Mailbox;
  readonly events: TaskEvents;
  readonly graceMs: number;
  readonly deadlineMs: number;
  readonly pollMs: number;
  /** How long a queued task waits with no live worker for its type before it notifies `no_worker`. */
  readonly noWorkerMs: number;
  readonly readChunkBytes: number;
  readonly stall: StallSettings;
  readonly reportError: (error: UnforgetError) => void;
  readonly live: Map<string, LiveTask>;
  /** The process group leader each task of this manager runs now, as it recorded it. */
  readonly processes: Map<string, ProcessIdentity>;
  /** Tasks whose pending notifications this manager delivers. */
  readonly responsible: Set<string>;
  /** Running tasks that another live manager watches; checked on every tick in case it dies. */
  readonly foreign: Set<string>;
  /** When the lease was last renewed (epoch ms); past the lease without renewal, every task is given up. */
  lastRenewedAt: number;
  closed: boolean;
}

export function createOwner(managerId: string): TaskOwner {
  return { managerId, ...currentProcessIdentity(), hostname: hostname() };
}

/** True while the owner of a record holds its lease (this manager always does for its own tasks). */
export async function ownerHolds(state: ManagerState, owner: TaskOwner | undefined): Promise<boolean> {
  if (owner === undefined) return false;
  if (owner.managerId === state.owner.managerId) return !state.closed;
  return state.backend.leases.holds(owner);
}

/** Where a task this manager runs keeps its files; only managers that run tasks have a directory. */
export function localDirectory(state: ManagerState): string {
  if (state.dir === undefined) {
    throw new TaskStateError("This manager queues its tasks for workers and runs none itself.");
  }
  return state.dir;
}
