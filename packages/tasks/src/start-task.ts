import { mkdir } from "node:fs/promises";
import { createRunner } from "./create-runner.ts";
import type { ManagerState } from "./manager-state.ts";
import { createRunnerContext } from "./runner-context.ts";
import { describeError } from "./task-errors.ts";
import { createTaskId } from "./task-id.ts";
import { finalizeTask, outputPathOf, superviseTask } from "./task-lifecycle.ts";
import { taskDirectory } from "./task-paths.ts";
import type { TaskRunner } from "./task-runner.ts";
import type { TaskSpec } from "./task-spec.ts";
import { describeSpec, validateTaskSpec } from "./validate-task-spec.ts";

/** Validates the spec, stores the record, begins the work and resolves with the new task's id. */
export async function startTask(state: ManagerState, spec: TaskSpec): Promise<string> {
  validateTaskSpec(spec);
  const id = createTaskId(spec.type);
  const createdAt = Date.now();
  const deadlineMs = spec.deadlineMs ?? state.deadlineMs;
  await mkdir(taskDirectory(state.dir, id), { recursive: true });
  const record = await state.records.create({
    id,
    type: spec.type,
    description: describeSpec(spec),
    status: "running",
    createdAt,
    cwd: "cwd" in spec ? spec.cwd : undefined,
    timeoutMs: spec.timeoutMs,
    deadlineAt: Number.isFinite(deadlineMs) ? createdAt + deadlineMs : undefined,
    owner: state.owner,
    pending: [],
  });
  let runner: TaskRunner;
  try {
    runner = createRunner(spec, createRunnerContext(state, id));
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
    outputPath: outputPathOf(state, id),
  });
  return id;
}
