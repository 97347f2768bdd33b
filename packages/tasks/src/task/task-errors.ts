import { UnforgetError } from "@unforget/core";

/** The codes of this package's errors; stable once published. */
export type TaskErrorCode =
  | "task_not_found"
  | "task_invalid_input"
  | "task_not_portable"
  | "task_state"
  | "task_lease_lost"
  | "task_store";

/** No task with this id exists in the manager's directory (or in the store). */
export class TaskNotFoundError extends UnforgetError {
  readonly taskId: string;

  constructor(message: string, details: { taskId: string; cause?: unknown }) {
    super("task_not_found", message, { cause: details.cause });
    this.taskId = details.taskId;
  }
}

/** A task spec, a tool input or a manager option is malformed; the message names the field and the fix. */
export class TaskInputError extends UnforgetError {
  /** The offending field, as the caller spelled it ("command", "offset", "stall.quietMs", …). */
  readonly field: string;

  constructor(message: string, details: { field: string; cause?: unknown }) {
    super("task_invalid_input", message, { cause: details.cause });
    this.field = details.field;
  }
}

/** `readOutput` was given an offset past the end of the output: no earlier read returned it. */
export class OutputOffsetError extends TaskInputError {
  readonly taskId: string;
  /** The offset asked for. */
  readonly offset: number;
  /** The output's size when the read was made, in bytes: the largest offset a read may start at. */
  readonly outputBytes: number;

  constructor(taskId: string, offset: number, outputBytes: number) {
    super(
      `offset: ${offset} is past the end of the output of task ${taskId}, which is ${outputBytes} bytes so far; pass 0 to read from the start, or the nextOffset of the previous read.`,
      { field: "offset" },
    );
    this.taskId = taskId;
    this.offset = offset;
    this.outputBytes = outputBytes;
  }
}

/**
 * The task would go on a queue for a worker elsewhere, but its spec carries code (a function) or its type
 * never leaves the process; nothing was stored or enqueued.
 */
export class TaskNotPortableError extends UnforgetError {
  readonly type: string;
  /** The field that carries the code ("type" when the whole type stays in its process). */
  readonly field: string;

  constructor(message: string, details: { type: string; field: string; cause?: unknown }) {
    super("task_not_portable", message, { cause: details.cause });
    this.type = details.type;
    this.field = details.field;
  }
}

/**
 * The manager or worker running a task no longer holds its lease: another owner has adopted the task or it
 * was retried elsewhere. Its writes are refused and its work is ended (or left to the new owner).
 */
export class LeaseLostError extends UnforgetError {
  readonly taskId: string;

  constructor(message: string, details: { taskId: string; cause?: unknown }) {
    super("task_lease_lost", message, { cause: details.cause });
    this.taskId = details.taskId;
  }
}

/** The operation does not fit the task's state (input to a finished task, a closed manager, a duplicate id). */
export class TaskStateError extends UnforgetError {
  readonly taskId: string | undefined;

  constructor(message: string, details: { taskId?: string; cause?: unknown } = {}) {
    super("task_state", message, { cause: details.cause });
    this.taskId = details.taskId;
  }
}

/** The task-state store could not read or write a record (an I/O error, a corrupt state file). */
export class TaskStoreError extends UnforgetError {
  /** The file or location involved, when there is one. */
  readonly location: string | undefined;

  constructor(message: string, details: { location?: string; cause?: unknown } = {}) {
    super("task_store", message, { cause: details.cause });
    this.location = details.location;
  }
}

/** The message of any thrown value, for error texts that quote a cause. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
