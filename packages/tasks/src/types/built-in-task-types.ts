import { createDreamTaskType } from "./dream-task-type.ts";
import { inProcessTeammateTaskType, localAgentTaskType } from "./job-runner.ts";
import { localBashTaskType } from "./local-bash-runner.ts";
import { mcpMonitorTaskType, monitorTaskType } from "./monitor-runner.ts";
import { remoteAgentTaskType } from "./remote-agent-runner.ts";
import type { TaskTypeDefinition } from "./task-type.ts";
import { localWorkflowTaskType } from "./workflow-runner.ts";

/** The types a manager runs when it is given none, in the order the docs list them. */
export const BUILT_IN_TASK_TYPES: readonly TaskTypeDefinition[] = [
  localBashTaskType,
  localAgentTaskType,
  localWorkflowTaskType,
  monitorTaskType,
  mcpMonitorTaskType,
  createDreamTaskType(),
  remoteAgentTaskType,
  inProcessTeammateTaskType,
];

/** The built-in types a worker on another machine can run: specs of these carry no code. */
export const PORTABLE_TASK_TYPES: readonly TaskTypeDefinition[] = BUILT_IN_TASK_TYPES.filter(
  (type) => type.toPortable !== undefined,
);
