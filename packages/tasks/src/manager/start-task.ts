import { mkdir } from "node:fs/promises";
import { createRunnerContext } from "../lifecycle/runner-context.ts";
import { finalizeTask, outputPathField, superviseTask } from "../lifecycle/task-lifecycle.ts";
import { describeError, TaskInputError } from "../task/task-errors.ts";
import { createTaskId } from "../task/task-id.ts";
import { taskDirectory } from "../task/task-paths.ts";
import type { TaskRecordInit } from "../task/task-record.ts";
import type { TaskRunner } from "../types/task-runner.ts";
import { type AnyTaskSpec, type TaskTypeDefinition, toPortableSpec } from "../types/task-type.ts";
import { describeSpec, validateTaskSpec } from "../types/validate-task-spec.ts";
import { localDirectory, type ManagerState } from "./manager-state.ts";

/** A queued task's timeout and deadline must fit the queue's longest run. */
function checkRunLength(spec: AnyTaskSpec, maxRunMs: number): void {
  for (const field of ["timeoutMs", "deadlineMs"] as const) {
    const value = spec[field];
    if (value !== undefined && Number.isFinite(value) && value >= maxRunMs) {
      throw new TaskInputError(
        `${field}: a task that goes to a worker must end within ${maxRunMs} ms (got ${value}); split the work into shorter tasks.`,
        { field },
      );
    }
  }
}

function newRecord(
  state: ManagerState,
  definition: TaskTypeDefinition,
  spec: AnyTaskSpec,
  runsHere: boolean,
): TaskRecordInit {
  const createdAt = Date.now();
  const deadlineMs = spec.deadlineMs ?? state.deadlineMs;
  return {
    id: createTaskId(definition.idPrefix),
    type: spec.type,
    description: describeSpec(definition, spec),
    status: "running",
    createdAt,
    cwd: definition.cwd?.(spec),
    timeoutMs: spec.timeoutMs,
    deadlineAt: Number.isFinite(deadlineMs) ? createdAt + deadlineMs : undefined,
    owner: runsHere ? state.owner : undefined,
    ...(state.sessionId === "" ? {} : { sessionId: state.sessionId }),
    pending: [],
  };
}

/**
 * Validates the spec, stores the record and begins the work here, or (with a queue) stores the record and
 * enqueues the portable spec for a worker, both or neither; resolves with the new task's id.
 */
export async function startTask(state: ManagerState, spec: AnyTaskSpec): Promise<string> {
  const queue = state.backend.queue;
  validateTaskSpec(spec, state.types, queue === undefined, state.capabilities);
  const definition = state.types.require(spec.type);
  if (queue !== undefined) {
    const portable = toPortableSpec(definition, spec);
    checkRunLength(spec, queue.maxRunMs);
    const record = await queue.enqueue(newRecord(state, definition, spec, false), portable);
    state.responsible.add(record.id);
    await state.events.started({ taskId: record.id, type: spec.type, description: record.description });
    return record.id;
  }
  const init = newRecord(state, definition, spec, true);
  const id = init.id;
  await mkdir(taskDirectory(localDirectory(state), id), { recursive: true });
  const record = await state.records.create(init);
  let runner: TaskRunner;
  try {
    runner = definition.start(spec, createRunnerContext(state, id));
  } catch (error) {
    // The record exists: it must say that the task never ran, not stay "running" forever.
    await finalizeTask(state, id, {
      status: "failed",
      endReason: "error",
      error: `could not start: ${describeError(error)}`,
    });
    throw error;
  }
  superviseTask(state, record, runner);
  // A later manager needs the process recorded before anyone relies on the id.
  await runner.ready;
  await state.events.started({
    taskId: id,
    type: spec.type,
    description: record.description,
    ...outputPathField(state, id),
  });
  return id;
}
