import type { ProcessIdentity } from "@unforget/process";
import { localDirectory, type ManagerState } from "../manager/manager-state.ts";
import { LeaseLostError } from "../task/task-errors.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import { isFinalStatus } from "../task/task-record.ts";
import type { RunnerContext } from "../types/task-runner.ts";
import { mutateOwned, outputPathField, raiseNotification, reportBackground } from "./task-lifecycle.ts";

/** The manager's side of a runner: where to write, how to record its process, how to notify. */
export function createRunnerContext(
  state: ManagerState,
  taskId: string,
  env: RunnerContext["env"] = process.env,
): RunnerContext {
  const folder = taskDirectory(localDirectory(state), taskId);
  const outputPath = outputFile(folder);
  return {
    taskId,
    taskDirectory: folder,
    outputPath,
    mailbox: state.mailbox,
    graceMs: state.graceMs,
    pollMs: state.pollMs,
    env,
    capabilities: state.capabilities,
    assertHeld() {
      const live = state.live.get(taskId);
      const lapsed = Date.now() - state.lastRenewedAt > state.backend.leases.leaseMs;
      if (lapsed || live?.relinquished === true || state.closed) {
        throw new LeaseLostError(
          `Task ${taskId} may belong to another manager now (this one ${state.closed ? "is closed" : "has not renewed its lease in time"}); the output was not written.`,
          { taskId },
        );
      }
    },
    async recordProcess(identity: ProcessIdentity | undefined) {
      if (identity === undefined) state.processes.delete(taskId);
      else state.processes.set(taskId, identity);
      await mutateOwned(state, taskId, (record) =>
        isFinalStatus(record.status) ? undefined : { ...record, process: identity },
      ).catch((error: unknown) => reportBackground(state, error));
    },
    notifyMessage(from, text) {
      raiseNotification(state, taskId, (record) => ({
        kind: "message",
        taskId,
        type: record.type,
        description: record.description,
        at: Date.now(),
        ...outputPathField(state, taskId),
        from,
        text,
      })).catch((error: unknown) => reportBackground(state, error));
    },
  };
}
