import { TaskInputError } from "../task/task-errors.ts";
import type { DreamJob, DreamSpec, TaskJob } from "../task/task-spec.ts";
import { startJob } from "./job-runner.ts";
import { defineTaskType, type TaskTypeDefinition } from "./task-type.ts";
import { fail, isObject, requireFunction, requireText } from "./validate-task-spec.ts";

/** A dream job seen as a task job: its log lines go to the output, its summary becomes the result. */
function dreamAsJob(job: DreamJob): TaskJob {
  return async ({ output, signal }) => {
    const result = await job.run({ signal, log: (line) => output.line(line) });
    const summary =
      typeof result === "object" && result !== null ? (result as { summary?: unknown }).summary : result;
    return typeof summary === "string" ? summary : undefined;
  };
}

export interface DreamTaskTypeOptions {
  /** Jobs this manager or worker runs when a spec names them (`job: "<name>"`), as a queued dream does. */
  jobs?: readonly DreamJob[];
}

/**
 * The `dream` type. A spec carries its job (an object with `run`) or, to go on a queue, the job's name; the
 * machine that runs it must then have been given that job here.
 */
export function createDreamTaskType(options: DreamTaskTypeOptions = {}): TaskTypeDefinition<DreamSpec> {
  const jobs = new Map((options.jobs ?? []).map((job) => [job.name, job]));
  const resolve = (named: DreamSpec["job"]): DreamJob => {
    if (typeof named !== "string") return named;
    const job = jobs.get(named);
    if (job === undefined) {
      throw new TaskInputError(
        `job: no dream job named ${JSON.stringify(named)} here (known: ${[...jobs.keys()].join(", ") || "none"}); pass it to createDreamTaskType({ jobs }).`,
        { field: "job" },
      );
    }
    return job;
  };
  return defineTaskType<DreamSpec>({
    type: "dream",
    idPrefix: "dream",
    validate(spec, runsHere) {
      if (typeof spec.job === "string") {
        requireText(spec, "job");
        if (runsHere) resolve(spec.job);
        return;
      }
      if (!isObject(spec.job))
        fail(
          "job",
          "must be an object with a name and a run function (the app's dream job), or a job's name.",
        );
      requireText(spec.job, "name", "job.name");
      requireFunction(spec.job.run, "job.run", "runs the consolidation once");
    },
    describe: (spec) => (typeof spec.job === "string" ? spec.job : spec.job.name),
    // The job's code stays here; its name travels, and the worker runs the job it was given by that name.
    toPortable: (spec) => ({ ...spec, job: typeof spec.job === "string" ? spec.job : spec.job.name }),
    start: (spec, context) => startJob(dreamAsJob(resolve(spec.job)), context),
  });
}
