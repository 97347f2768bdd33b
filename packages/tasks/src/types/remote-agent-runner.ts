import { setTimeout as sleep } from "node:timers/promises";
import { coordinatorAddress, type MailboxMessage } from "../mailbox/mailbox.ts";
import { createOutputWriter } from "../output/task-output-writer.ts";
import { describeError } from "../task/task-errors.ts";
import type { RemoteAgentSpec } from "../task/task-spec.ts";
import { clipResult, pumpCoordinatorMessages } from "./job-runner.ts";
import type { RunnerContext, TaskOutcome, TaskRunner } from "./task-runner.ts";
import { defineTaskType } from "./task-type.ts";
import { fail, isObject, requireFunction, requireText } from "./validate-task-spec.ts";

/**
 * Drives an agent that runs elsewhere, through the mailbox alone: its progress lines go to the output, its
 * messages become notifications, its "result" or "error" message ends the task. Stopping it sends
 * "shutdown"; an agent that does not answer within the grace period is cancelled through the connector.
 */
export function startRemoteAgent(spec: RemoteAgentSpec, context: RunnerContext): TaskRunner {
  const inbox = context.taskId;
  const outbox = coordinatorAddress(context.taskId);
  const output = createOutputWriter(context.outputPath, context.taskId, context.assertHeld);
  const listening = new AbortController();
  let final: MailboxMessage | undefined;

  const done = (async (): Promise<TaskOutcome> => {
    try {
      await spec.connector.launch({
        taskId: context.taskId,
        prompt: spec.prompt,
        inbox,
        outbox,
        mailbox: context.mailbox,
      });
    } catch (error) {
      await output.close();
      return {
        status: "failed",
        endReason: "error",
        error: `could not launch the remote agent: ${describeError(error)}`,
      };
    }
    await pumpCoordinatorMessages(context, output, listening.signal, (message) => {
      final = message;
      listening.abort();
    });
    if (final?.kind === "result") await output.line(final.text).catch(() => undefined);
    await output.close();
    if (final?.kind === "result")
      return { status: "completed", endReason: "exit", result: clipResult(final.text) };
    if (final?.kind === "error") return { status: "failed", endReason: "error", error: final.text };
    return {
      status: "failed",
      endReason: "stopped",
      error: "the remote agent did not answer the shutdown request and was cancelled",
    };
  })();

  return {
    done,
    watchForPrompts: false,
    async stop() {
      if (!listening.signal.aborted) {
        await context.mailbox.send({ from: outbox, to: inbox, kind: "shutdown", text: "stop" });
        await Promise.race([done, sleep(context.graceMs, undefined, { ref: false })]);
      }
      if (!listening.signal.aborted) {
        await spec.connector.cancel?.(context.taskId).catch(() => undefined);
        listening.abort();
      }
      await done;
    },
    async write(input) {
      await context.mailbox.send({ from: outbox, to: inbox, kind: "message", text: input });
    },
  };
}

/** An agent elsewhere, launched by the caller's connector and driven over the mailbox. */
export const remoteAgentTaskType = defineTaskType<RemoteAgentSpec>({
  type: "remote_agent",
  idPrefix: "remote",
  validate(spec) {
    requireText(spec, "description");
    requireText(spec, "prompt");
    if (!isObject(spec.connector)) fail("connector", "must be an object with a launch function.");
    requireFunction(spec.connector.launch, "connector.launch", "starts the agent elsewhere");
  },
  describe: (spec) => spec.description,
  start: startRemoteAgent,
});
