import { setTimeout as sleep } from "node:timers/promises";
import { coordinatorAddress, createMailboxEndpoint, type MailboxMessage } from "../mailbox/mailbox.ts";
import { type ClosableOutputWriter, createOutputWriter } from "../output/task-output-writer.ts";
import { describeError } from "../task/task-errors.ts";
import type { InProcessTeammateSpec, LocalAgentSpec, TaskJob } from "../task/task-spec.ts";
import type { RunnerContext, TaskOutcome, TaskRunner } from "./task-runner.ts";
import { defineTaskType } from "./task-type.ts";
import { fail, isObject, optionalText, requireFunction, requireText } from "./validate-task-spec.ts";

/** Longest `result` kept in the task record; the whole report is in the output file. */
export const MAX_RESULT_CHARACTERS = 8_000;

export function clipResult(result: string | undefined): string | undefined {
  if (result === undefined || result.length <= MAX_RESULT_CHARACTERS) return result;
  return `${result.slice(0, MAX_RESULT_CHARACTERS)}\n[… ${result.length - MAX_RESULT_CHARACTERS} more characters in the task's output]`;
}

/**
 * Delivers what a task sends to its coordinator until `signal` aborts: "message" becomes a notification,
 * "progress" an output line; `onFinal` receives "result" and "error" (the remote agent's end).
 */
export async function pumpCoordinatorMessages(
  context: RunnerContext,
  output: ClosableOutputWriter,
  signal: AbortSignal,
  onFinal?: (message: MailboxMessage) => void,
): Promise<void> {
  const address = coordinatorAddress(context.taskId);
  const deliver = async (messages: MailboxMessage[]) => {
    for (const message of messages) {
      if (message.kind === "message") {
        context.notifyMessage(message.from, message.text);
        await output.line(`[message from ${message.from}] ${message.text}`).catch(() => undefined);
      } else if (message.kind === "progress") {
        await output.line(message.text).catch(() => undefined);
      } else if (message.kind === "result" || message.kind === "error") {
        onFinal?.(message);
      }
    }
  };
  while (!signal.aborted) {
    await deliver(await context.mailbox.receive(address, { waitMs: 60_000, signal }));
  }
  // What arrived just before the end is still delivered.
  await deliver(await context.mailbox.receive(address));
}

/**
 * Runs an in-process job (an agent loop, a teammate, a dream): it writes to the output file, talks over the
 * mailbox, and is asked to stop through its abort signal. A job that ignores the signal is abandoned after
 * the grace period: the task ends as stopped and further output writes are refused.
 */
export function startJob(job: TaskJob, context: RunnerContext, prompt?: string): TaskRunner {
  const controller = new AbortController();
  const pumpStop = new AbortController();
  const output = createOutputWriter(context.outputPath, context.taskId, context.assertHeld);
  const mailbox = createMailboxEndpoint(context.mailbox, context.taskId);
  const pump = pumpCoordinatorMessages(context, output, pumpStop.signal).catch(() => undefined);

  const finished = (async (): Promise<TaskOutcome> => {
    try {
      const result = await job({
        taskId: context.taskId,
        prompt,
        output,
        signal: controller.signal,
        mailbox,
      });
      return {
        status: "completed",
        endReason: "exit",
        result: clipResult(typeof result === "string" ? result : undefined),
      };
    } catch (error) {
      if (controller.signal.aborted)
        return { status: "failed", endReason: "stopped", error: describeError(error) };
      return { status: "failed", endReason: "error", error: describeError(error) };
    }
  })();

  let abandon: (outcome: TaskOutcome) => void = () => undefined;
  const abandoned = new Promise<TaskOutcome>((resolve) => {
    abandon = resolve;
  });
  const done = Promise.race([finished, abandoned]).then(async (outcome) => {
    pumpStop.abort();
    await pump;
    await output.close();
    return outcome;
  });

  return {
    done,
    watchForPrompts: false,
    async stop() {
      controller.abort();
      const graceOver = sleep(context.graceMs, undefined, { ref: false }).then(() =>
        abandon({
          status: "failed",
          endReason: "stopped",
          error: `the job did not stop within ${context.graceMs} ms of its abort signal and was abandoned`,
        }),
      );
      await Promise.race([done, graceOver]);
      await done;
    },
    async write(input) {
      await context.mailbox.send({
        from: mailbox.coordinator,
        to: context.taskId,
        kind: "message",
        text: input,
      });
    },
  };
}

/** The caller's agent loop, run in this process: it never goes on a queue. */
export const localAgentTaskType = defineTaskType<LocalAgentSpec>({
  type: "local_agent",
  idPrefix: "agent",
  validate(spec) {
    requireText(spec, "description");
    optionalText(spec, "prompt");
    requireFunction(spec.run, "run", "the agent loop, called with the task's context");
  },
  describe: (spec) => spec.description,
  start: (spec, context) => startJob(spec.run, context, spec.prompt),
});

/** A worker of the coordinator in this process, talking over the mailbox. */
export const inProcessTeammateTaskType = defineTaskType<InProcessTeammateSpec>({
  type: "in_process_teammate",
  idPrefix: "mate",
  validate(spec) {
    if (!isObject(spec.teammate)) fail("teammate", "must be an object with a name and a run function.");
    requireText(spec.teammate, "name", "teammate.name");
    requireFunction(spec.teammate.run, "teammate.run", "the teammate's loop");
    optionalText(spec, "prompt");
  },
  describe: (spec) => spec.teammate.name,
  start: (spec, context) => startJob(spec.teammate.run, context, spec.prompt),
});
