import { startJob } from "./job-runner.ts";
import { startLocalBash } from "./local-bash-runner.ts";
import { startMonitor } from "./monitor-runner.ts";
import { startRemoteAgent } from "./remote-agent-runner.ts";
import type { RunnerContext, TaskRunner } from "./task-runner.ts";
import type { DreamJob, TaskJob, TaskSpec } from "./task-spec.ts";
import { startWorkflow } from "./workflow-runner.ts";

/** A dream job seen as a task job: its log lines go to the output, its summary becomes the result. */
function dreamAsJob(job: DreamJob): TaskJob {
  return async ({ output, signal }) => {
    const result = await job.run({ signal, log: (line) => output.line(line) });
    const summary =
      typeof result === "object" && result !== null ? (result as { summary?: unknown }).summary : result;
    return typeof summary === "string" ? summary : undefined;
  };
}

/** Starts the work of a validated spec. */
export function createRunner(spec: TaskSpec, context: RunnerContext): TaskRunner {
  switch (spec.type) {
    case "local_bash":
      return startLocalBash(spec, context);
    case "local_agent":
      return startJob(spec.run, context, spec.prompt);
    case "in_process_teammate":
      return startJob(spec.teammate.run, context, spec.prompt);
    case "dream":
      return startJob(dreamAsJob(spec.job), context);
    case "local_workflow":
      return startWorkflow(spec, context);
    case "monitor":
    case "monitor_mcp":
      return startMonitor(spec, context);
    case "remote_agent":
      return startRemoteAgent(spec, context);
  }
}
