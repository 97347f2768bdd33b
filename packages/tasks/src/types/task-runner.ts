import { constants } from "node:os";
import type { ProcessIdentity } from "@unforget/process";
import type { Mailbox } from "../mailbox/mailbox.ts";
import type { TaskEndReason } from "../task/task-record.ts";
import type { TaskCapabilities } from "./task-capabilities.ts";

/** How the work of a task ended, as its runner saw it; the manager turns it into the final record. */
export interface TaskOutcome {
  status: "completed" | "failed";
  endReason: TaskEndReason;
  exitCode?: number;
  signal?: string;
  error?: string;
  result?: string;
}

/** What a runner gets from the manager (or worker) that runs its task. */
export interface RunnerContext {
  taskId: string;
  /** The task's folder on this machine (output, exit status and pid files live here). */
  taskDirectory: string;
  /** The output file on this machine: the runner appends to it, and nothing else. */
  outputPath: string;
  mailbox: Mailbox;
  /** Between SIGTERM and SIGKILL; also how long an in-process job may take to honour its abort signal. */
  graceMs: number;
  /** How often a runner that watches a process it did not start checks for its end. */
  pollMs: number;
  /** The environment the task's commands start from (their spec's `env` is added to it). */
  env: Readonly<Record<string, string | undefined>>;
  /** What the application gave the manager for the types that need it; `validate` checked what this task needs. */
  capabilities: TaskCapabilities;
  /**
   * Throws `LeaseLostError` while this manager cannot be sure it still holds the task (its lease lapsed, as
   * after a pause, and ownership was not confirmed since). In-process writers call it before every write.
   */
  assertHeld(): void;
  /** Records the process group doing the task's work now, so a later manager can reconcile it. Never rejects. */
  recordProcess(identity: ProcessIdentity | undefined): Promise<void>;
  /** Raises a "message" notification: an agent or teammate wrote to the coordinator. */
  notifyMessage(from: string, text: string): void;
}

/** One running task, whatever its type: what `TaskTypeDefinition.start` returns. */
export interface TaskRunner {
  /** Settles once, when the work has ended; never rejects. */
  readonly done: Promise<TaskOutcome>;
  /** Settles once the runner has recorded what a later manager needs (its process); `start()` waits for it. */
  readonly ready?: Promise<void>;
  /** Called by `stop()` and by the timeout: ends the work; resolves once `done` has settled. */
  stop(): Promise<void>;
  /** Called by `write()`; absent when the task takes no input. */
  write?(input: string, end: boolean): Promise<void>;
  /** True when a process writes the output, so quiet output may be a prompt waiting for an answer. */
  readonly watchForPrompts: boolean;
  /** Called by `close()`: lets the work outlive this manager (process tasks only). */
  release?(): void;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

/** The outcome of a process from its exit code (as a wrapper shell recorded it) or the signal that killed it. */
export function outcomeFromExit(code: number | undefined | null, signal?: string | null): TaskOutcome {
  if (code === 0) return { status: "completed", endReason: "exit", exitCode: 0 };
  if (typeof code === "number") {
    const byShell = code > 128 ? SIGNAL_NAMES.get(code - 128) : undefined;
    return {
      status: "failed",
      endReason: "exit",
      exitCode: code,
      error: `exited with code ${code}${byShell ? ` (the shell's code for a process killed by ${byShell})` : ""}`,
    };
  }
  if (signal) return { status: "failed", endReason: "signal", signal, error: `killed by ${signal}` };
  return {
    status: "failed",
    endReason: "lost",
    error:
      "the process ended while no manager was watching and left no exit status (killed with SIGKILL, or the machine restarted)",
  };
}
