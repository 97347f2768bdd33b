import { TaskInputError, TaskNotPortableError } from "../task/task-errors.ts";
import type { TaskRecord } from "../task/task-record.ts";
import type { TaskSpecBase } from "../task/task-spec.ts";
import type { TaskCapabilities } from "./task-capabilities.ts";
import type { RunnerContext, TaskOutcome, TaskRunner } from "./task-runner.ts";

/** A spec of some task type: what `start()` accepts once the type is registered. */
export interface AnyTaskSpec extends TaskSpecBase {
  type: string;
}

/** A spec of a type added with `defineTaskType`, as `start()` accepts it. */
export type CustomTaskSpec = AnyTaskSpec & Record<string, unknown>;

/** A spec in plain JSON that a worker on another machine can run: no functions, no secrets by value. */
export type PortableTaskSpec = AnyTaskSpec & Record<string, unknown>;

/**
 * One kind of background task: what it accepts, how it is described, how it runs. The built-in types are
 * definitions like any other; a manager (or worker) runs the types it is given, and nothing else.
 */
export interface TaskTypeDefinition<Spec extends AnyTaskSpec = AnyTaskSpec> {
  /** The `type` of its specs; unique among the types a manager is given. */
  readonly type: Spec["type"];
  /** Starts its task ids ("bash" gives "bash-k3j4h5g6a1"): letters and digits. */
  readonly idPrefix: string;
  /**
   * Called by `start()` before anything is stored: throws `TaskInputError` naming the first bad field.
   * `runsHere` is false when a worker elsewhere will run it: leave local checks (a directory exists) to it.
   * `capabilities` is what the application gave the manager that runs it here (e.g. `connectMcp`).
   */
  validate(spec: Record<string, unknown>, runsHere: boolean, capabilities: TaskCapabilities): void;
  /** Called by `start()` when the spec has no description: one line for `list()` and notifications. */
  describe(spec: Spec): string;
  /** The working directory the task's command runs in, shown by `list()`; absent when it has none. */
  cwd?(spec: Spec): string | undefined;
  /**
   * Called when the task goes on a queue for a worker elsewhere: the spec as plain JSON. Throws
   * `TaskNotPortableError` for a spec that carries code (a function) the worker cannot receive; a type
   * without it never leaves its manager's process.
   */
  toPortable?(spec: Spec): PortableTaskSpec;
  /** Called once per task, on the machine that runs it: begins the work and returns its runner. */
  start(spec: Spec, context: RunnerContext): TaskRunner;
  /**
   * Called when a manager adopts a running task whose owner is gone: a runner that watches the work still
   * going on (a process, by pid and start time), how it ended meanwhile, or undefined when nothing survived
   * its owner (the task is then recorded as lost).
   */
  attach?(record: TaskRecord, context: RunnerContext): TaskRunner | TaskOutcome | undefined;
}

/** Declares a task type (checked once, here): the way built-in and custom types are made. */
export function defineTaskType<Spec extends AnyTaskSpec>(
  definition: TaskTypeDefinition<Spec>,
): TaskTypeDefinition<Spec> {
  if (typeof definition.type !== "string" || !/^[a-z][a-z0-9_]{0,39}$/.test(definition.type)) {
    throw new TaskInputError(
      `type: a task type is a lower-case name such as "local_bash" (got ${JSON.stringify(definition.type)}).`,
      { field: "type" },
    );
  }
  if (!/^[a-z][a-z0-9]{0,15}$/.test(definition.idPrefix)) {
    throw new TaskInputError(
      `idPrefix: letters and digits, at most 16, starting with a letter (got ${JSON.stringify(definition.idPrefix)}).`,
      { field: "idPrefix" },
    );
  }
  return Object.freeze({ ...definition });
}

/** The types one manager or worker runs, by name. */
export interface TaskTypeRegistry {
  readonly names: readonly string[];
  /** The definition of `type`, or a `TaskInputError` listing the registered types. */
  require(type: unknown): TaskTypeDefinition;
  has(type: string): boolean;
}

export function createTaskTypeRegistry(types: readonly TaskTypeDefinition[]): TaskTypeRegistry {
  const byName = new Map<string, TaskTypeDefinition>();
  for (const definition of types) {
    if (byName.has(definition.type)) {
      throw new TaskInputError(`types: "${definition.type}" is registered twice; pass each type once.`, {
        field: "types",
      });
    }
    byName.set(definition.type, definition);
  }
  const names = [...byName.keys()];
  return {
    names,
    has: (type) => byName.has(type),
    require(type) {
      const definition = typeof type === "string" ? byName.get(type) : undefined;
      if (definition === undefined) {
        throw new TaskInputError(
          `type: must be one of ${names.join(", ")} (got ${JSON.stringify(type)}); register other types with defineTaskType.`,
          { field: "type" },
        );
      }
      return definition;
    },
  };
}

/** The portable form of a spec, or `TaskNotPortableError` when its type never leaves the process. */
export function toPortableSpec(definition: TaskTypeDefinition, spec: AnyTaskSpec): PortableTaskSpec {
  if (definition.toPortable === undefined) {
    throw new TaskNotPortableError(
      `A ${definition.type} task runs code from this process (a function), which cannot be sent to a worker on another machine; run it with a manager that runs tasks itself (the file backend), or use a command task.`,
      { type: definition.type, field: "type" },
    );
  }
  return definition.toPortable(spec);
}
