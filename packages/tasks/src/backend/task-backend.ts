import type { Mailbox } from "../mailbox/mailbox.ts";
import type { TaskOwner, TaskRecord, TaskRecordInit } from "../task/task-record.ts";
import type { PortableTaskSpec } from "../types/task-type.ts";
import type { TaskStateStore } from "./task-state-store.ts";

/** The committed size of a task's output, and when it last grew. */
export interface TaskOutputStat {
  /** Bytes readers can read now; only grows. */
  size: number;
  /** Epoch milliseconds of the last write; absent before any output. */
  lastWriteAt?: number;
}

/**
 * Where readers find a task's output. The file store reads `<dir>/<id>/output.log`, which the task writes
 * itself; a remote store serves what workers have shipped and committed. Readers never see uncommitted bytes.
 */
export interface TaskOutputStore {
  /** The committed size of a task's output (of `attempt`, by default the latest); 0 before any output. */
  stat(id: string, attempt?: number): Promise<TaskOutputStat>;
  /** At most `maxBytes` committed bytes from `offset` (fewer at the end; none past it). */
  read(id: string, offset: number, maxBytes: number, attempt?: number): Promise<Uint8Array>;
  /** The output file on this machine, when readers here can open it (the file store); else undefined. */
  localPath(id: string): string | undefined;
  /**
   * Called when a task starts running on this machine, where its runner appends to `localPath`: ships that
   * file to the store as it grows, for readers elsewhere. Absent when the local file is the store itself.
   */
  follow?(task: TaskOutputFollow): TaskOutputShipper;
}

/** What a shipping output store is told about a task that starts running here. */
export interface TaskOutputFollow {
  id: string;
  /** The attempt that runs here: every chunk is written for it and refused once the task has moved on. */
  attempt: number;
  /** The file the runner appends to. */
  localPath: string;
  /** Called once when the output passes the store's cap: the task is stopped (nothing is cut silently). */
  onOverflow(limitBytes: number): void;
}

/** Ships one task's local output to the store. */
export interface TaskOutputShipper {
  /** Called before the task's end is recorded: resolves once everything written so far is committed. */
  flush(): Promise<void>;
  /** Called when this machine stops running the task (ended or given up): stops shipping, without a flush. */
  stop(): void;
}

/**
 * Who holds a task. An owner (a manager or worker) renews its lease by heartbeat; once the lease lapses, any
 * other owner may adopt its tasks, and the old owner's writes are refused (`LeaseLostError`).
 */
export interface TaskLeaseStore {
  /** How long a lease lasts after its last renewal, in milliseconds; owners renew every third of it. */
  readonly leaseMs: number;
  /**
   * Called by a live owner on every heartbeat with the tasks it runs now: its lease (and theirs) runs
   * `leaseMs` from now; a task it no longer runs is not renewed, so it lapses. Rejects when unreachable.
   */
  renew(owner: TaskOwner, running: readonly string[]): Promise<void>;
  /** True while `owner`'s lease holds; an owner whose process is known to be gone holds none. */
  holds(owner: TaskOwner): Promise<boolean>;
  /** Called by a closing owner: its lease ends now, so that its tasks are adopted without waiting. */
  release(owner: TaskOwner): Promise<void>;
}

/** What another manager asks of a task's owner. */
export type TaskCommandKind = "stop" | "stdin";

export interface TaskCommandInit {
  taskId: string;
  kind: TaskCommandKind;
  /** For "stdin": the text to write. */
  input?: string;
  /** For "stdin": close the task's stdin afterwards. */
  end?: boolean;
}

export interface TaskCommand extends TaskCommandInit {
  /** Unique; assigned by the store. */
  readonly id: string;
  /** Epoch milliseconds when the store accepted it. */
  readonly sentAt: number;
}

/** How the owner answered a command. */
export interface TaskCommandResult {
  ok: boolean;
  /** Why it was refused, for the sender's error (written for whoever reads it: an agent, a person). */
  error?: string;
  /** Epoch milliseconds. */
  at: number;
}

/** Commands (stop, stdin) for the owner of a task, wherever it runs, each answered once. */
export interface TaskCommandStore {
  /** Called by a manager that does not run the task; resolves once any owner's `pending` will return it. */
  send(command: TaskCommandInit): Promise<TaskCommand>;
  /** Called by the task's owner, often: the unanswered commands for `taskId`, oldest first. */
  pending(taskId: string): Promise<TaskCommand[]>;
  /** Called by the owner once it has carried the command out or refused it; the first answer stands. */
  acknowledge(command: TaskCommand, result: TaskCommandResult): Promise<void>;
  /** Called by the sender: the owner's answer, or undefined while there is none. */
  result(command: TaskCommand): Promise<TaskCommandResult | undefined>;
}

/** A queue of tasks for workers on any machine (pg-boss); a backend without one runs tasks in the manager. */
export interface TaskQueue {
  /** Stores the record and puts its portable spec on the queue of its type, both or neither. */
  enqueue(record: TaskRecordInit, spec: PortableTaskSpec): Promise<TaskRecord>;
  /** The longest `timeoutMs` (and finite `deadlineMs`) a queued task may have, in milliseconds. */
  readonly maxRunMs: number;
  /** How many workers that run `type` hold a lease now; a task none serves for a minute notifies `no_worker`. */
  liveWorkers(type: string): Promise<number>;
}

/**
 * Everything a task manager keeps outside its own memory. The file backend (`createFileTaskBackend`) keeps it
 * in a directory on this machine; a server backend keeps it where every machine reaches it, and adds a queue.
 * Every backend passes `describeTaskBackendContract` from `@unforget/tasks/testing`.
 */
export interface TaskBackend {
  /** Task records, updated with compare-and-swap. */
  readonly store: TaskStateStore;
  /** The output as readers see it. */
  readonly output: TaskOutputStore;
  /** Owners' leases and heartbeats. */
  readonly leases: TaskLeaseStore;
  /** Stop and stdin for a task's owner. */
  readonly commands: TaskCommandStore;
  /** The mailbox agents, teammates and coordinators talk over; durable like the records. */
  readonly mailbox: Mailbox;
  /** Present when tasks go to workers: `start()` then enqueues portable specs instead of running them. */
  readonly queue?: TaskQueue;
}
