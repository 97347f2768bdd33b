import type { ManagerState } from "./manager-state.ts";
import type { ProcessIdentity } from "./process-identity.ts";
import { outputPathOf, raiseNotification, reportBackground } from "./task-lifecycle.ts";
import { taskDirectory } from "./task-paths.ts";
import { isFinalStatus } from "./task-record.ts";
import type { RunnerContext } from "./task-runner.ts";

/** The manager's side of a runner: where to write, how to record its process, how to notify. */
export function createRunnerContext(state: ManagerState, taskId: string): RunnerContext {
  const outputPath = outputPathOf(state, taskId);
  return {
    taskId,
    taskDirectory: taskDirectory(state.dir, taskId),
    outputPath,
    mailbox: state.mailbox,
    graceMs: state.graceMs,
    async recordProcess(identity: ProcessIdentity | undefined) {
      await state.records
        .mutate(taskId, (record) =>
          isFinalStatus(record.status) ? undefined : { ...record, process: identity },
        )
        .catch((error: unknown) => reportBackground(state, error));
    },
    notifyMessage(from, text) {
      raiseNotification(state, taskId, (record) => ({
        kind: "message",
        taskId,
        type: record.type,
        description: record.description,
        at: Date.now(),
        outputPath,
        from,
        text,
      })).catch((error: unknown) => reportBackground(state, error));
    },
  };
}
