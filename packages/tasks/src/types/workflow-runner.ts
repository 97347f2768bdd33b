import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { spawnShellCommand, terminateGroup } from "@unforget/process";
import { type ClosableOutputWriter, createOutputWriter } from "../output/task-output-writer.ts";
import { describeError, TaskNotPortableError } from "../task/task-errors.ts";
import type { CommandWorkflowStep, FunctionWorkflowStep, LocalWorkflowSpec } from "../task/task-spec.ts";
import { clipResult } from "./job-runner.ts";
import { endLeftovers } from "./local-bash-runner.ts";
import { outcomeFromExit, type RunnerContext, type TaskOutcome, type TaskRunner } from "./task-runner.ts";
import { defineTaskType } from "./task-type.ts";
import { checkCommandFields, fail, isObject, requireFunction, requireText } from "./validate-task-spec.ts";

/** Where one step's output lies in the task's output file. */
interface ByteRange {
  start: number;
  end: number;
}

async function outputSize(path: string): Promise<number> {
  return (await stat(path).catch(() => undefined))?.size ?? 0;
}

/** What a step ended with; `stop` is set while a step can be stopped. */
interface StepControl {
  stop?: () => Promise<void>;
}

async function runCommandStep(
  step: CommandWorkflowStep,
  input: ByteRange,
  context: RunnerContext,
  control: StepControl,
): Promise<TaskOutcome> {
  const { child, identity, exited } = spawnShellCommand(step.command, {
    cwd: step.cwd,
    env: step.env,
    baseEnv: context.env,
    outputPath: context.outputPath,
  });
  if (identity !== undefined) {
    await context.recordProcess(identity);
    control.stop = () => terminateGroup(identity.pid, context.graceMs).then(() => undefined);
  }
  // The previous step's output streams into this step's stdin from the file, never through memory.
  const feed =
    input.end > input.start
      ? pipeline(
          createReadStream(context.outputPath, { start: input.start, end: input.end - 1 }),
          child.stdin!,
        )
      : Promise.resolve(child.stdin?.end());
  feed.catch(() => undefined); // A step that does not read its input closes the pipe early: not an error.
  const { code, signal, error } = await exited;
  control.stop = undefined;
  if (error !== undefined)
    return { status: "failed", endReason: "error", error: `could not start: ${describeError(error)}` };
  if (identity !== undefined) await endLeftovers(identity.pid, context.graceMs);
  return outcomeFromExit(code, signal);
}

async function runFunctionStep(
  step: FunctionWorkflowStep,
  input: ByteRange,
  context: RunnerContext,
  output: ClosableOutputWriter,
  signal: AbortSignal,
): Promise<TaskOutcome> {
  const readInput = async () => {
    if (input.end <= input.start) return "";
    const handle = await open(context.outputPath, "r");
    try {
      const bytes = Buffer.alloc(input.end - input.start);
      await handle.read(bytes, 0, bytes.length, input.start);
      return bytes.toString("utf8");
    } finally {
      await handle.close();
    }
  };
  try {
    const result = await step.run({ taskId: context.taskId, output, signal, input: readInput });
    if (typeof result === "string" && result !== "")
      await output.write(result.endsWith("\n") ? result : `${result}\n`);
    return { status: "completed", endReason: "exit" };
  } catch (error) {
    return { status: "failed", endReason: signal.aborted ? "stopped" : "error", error: describeError(error) };
  }
}

/**
 * Runs the steps in order. Each step's output goes to the task's output after a header line, and the byte
 * range it occupies there is the next step's input; the first failing step ends the workflow.
 */
export function startWorkflow(spec: LocalWorkflowSpec, context: RunnerContext): TaskRunner {
  const controller = new AbortController();
  const output = createOutputWriter(context.outputPath, context.taskId, context.assertHeld);
  const control: StepControl = {};
  const count = spec.steps.length;

  const done = (async (): Promise<TaskOutcome> => {
    let input: ByteRange = { start: 0, end: 0 };
    try {
      for (const [index, step] of spec.steps.entries()) {
        if (controller.signal.aborted) return { status: "failed", endReason: "stopped" };
        await output.line(`--- step ${index + 1}/${count}: ${step.name} ---`);
        const start = await outputSize(context.outputPath);
        const outcome =
          "command" in step
            ? await runCommandStep(step, input, context, control)
            : await runFunctionStep(step, input, context, output, controller.signal);
        if (outcome.status === "failed") {
          return {
            ...outcome,
            error: `step ${index + 1}/${count} "${step.name}" ${outcome.error ?? "failed"}`,
          };
        }
        input = { start, end: await outputSize(context.outputPath) };
      }
      const last = spec.steps[count - 1]!.name;
      return {
        status: "completed",
        endReason: "exit",
        result: clipResult(
          `${count} steps completed; the last, "${last}", wrote bytes ${input.start}–${input.end} of the output.`,
        ),
      };
    } finally {
      await output.close();
    }
  })();

  return {
    done,
    watchForPrompts: true,
    async stop() {
      controller.abort();
      await control.stop?.();
      await done;
    },
  };
}

/** Steps in order, each fed the previous one's output; portable when every step is a command. */
export const localWorkflowTaskType = defineTaskType<LocalWorkflowSpec>({
  type: "local_workflow",
  idPrefix: "workflow",
  validate(spec, runsHere) {
    requireText(spec, "description");
    const steps = spec.steps;
    if (!Array.isArray(steps) || steps.length === 0) fail("steps", "must be a non-empty array of steps.");
    steps.forEach((step: unknown, index) => {
      const path = `steps[${index}]`;
      if (!isObject(step))
        fail(path, "must be an object with a name and either a command or a run function.");
      requireText(step, "name", `${path}.name`);
      if (typeof step.command === "string") {
        requireText(step, "command", `${path}.command`);
        checkCommandFields(step, runsHere, `${path}.`);
      } else
        requireFunction(step.run, `${path}.run`, "give a step either a command string or a run function");
    });
  },
  describe: (spec) => spec.description,
  toPortable(spec) {
    const index = spec.steps.findIndex((step) => !("command" in step));
    if (index !== -1) {
      throw new TaskNotPortableError(
        `steps[${index}] ("${spec.steps[index]!.name}") is a function, which cannot be sent to a worker on another machine; make it a command step, or run the workflow with a manager that runs tasks itself.`,
        { type: "local_workflow", field: `steps[${index}].run` },
      );
    }
    return { ...spec, steps: spec.steps.map((step) => ({ ...step })) };
  },
  start: startWorkflow,
});
