import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import {
  groupExists,
  isProcessAlive,
  type ProcessIdentity,
  readProcessIdentity,
  shellCommandLine,
  spawnGroup,
  terminateGroup,
} from "@unforget/process";
import { describeError, TaskStateError } from "../task/task-errors.ts";
import { exitStatusFile, pidFile } from "../task/task-paths.ts";
import type { TaskRecord } from "../task/task-record.ts";
import type { LocalBashSpec } from "../task/task-spec.ts";
import { outcomeFromExit, type RunnerContext, type TaskOutcome, type TaskRunner } from "./task-runner.ts";
import { defineTaskType } from "./task-type.ts";
import { checkCommandFields, checkEnvNames, optionalText, requireText } from "./validate-task-spec.ts";

/**
 * The wrapper shell leads the task's process group. It records its pid first (so a manager that dies right
 * after the spawn can still find it), runs the command in the foreground and records the exit status with an
 * atomic rename, so the status survives the manager. Its TERM/INT/HUP trap is a handler, not an ignore:
 * handlers are reset in the command, which therefore still dies of SIGTERM, while the wrapper outlives it long
 * enough to write the status. $1 pid file, $2 exit-status file, then the shell's argv.
 */
const WRAPPER = [
  'echo $$ > "$1"',
  'exit_file="$2"',
  "shift 2",
  "trap : TERM INT HUP",
  '"$@"',
  "code=$?",
  'printf "%s\\n" "$code" > "$exit_file.tmp" && mv -f "$exit_file.tmp" "$exit_file"',
  'exit "$code"',
].join("\n");

/**
 * A number the wrapper shell wrote (its pid file, the exit status), or undefined when it did not get to
 * write it.
 */
export function readWrapperNumber(path: string): number | undefined {
  try {
    const value = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isNaN(value) ? undefined : value;
  } catch {
    return undefined;
  }
}

/** After the leader exits, whatever it left in its group is ended too, so nothing writes after `done`. */
export async function endLeftovers(pgid: number, graceMs: number): Promise<void> {
  if (groupExists(pgid)) await terminateGroup(pgid, graceMs);
}

/** Starts `spec.command` in its own process group, stdout and stderr appended to the output file. */
export function startLocalBash(spec: LocalBashSpec, context: RunnerContext): TaskRunner {
  const exitPath = exitStatusFile(context.taskDirectory);
  const { child, identity, exited } = spawnGroup(
    "/bin/sh",
    [
      "-c",
      WRAPPER,
      "unforget-task",
      pidFile(context.taskDirectory),
      exitPath,
      ...shellCommandLine(spec.command, spec.shell),
    ],
    { cwd: spec.cwd, env: spec.env, baseEnv: context.env, outputPath: context.outputPath },
  );
  const stdin = child.stdin!;
  const ready = identity !== undefined ? context.recordProcess(identity) : Promise.resolve();

  const done = exited.then(async ({ code, signal, error }): Promise<TaskOutcome> => {
    if (error !== undefined)
      return { status: "failed", endReason: "error", error: `could not start: ${describeError(error)}` };
    if (identity !== undefined) await endLeftovers(identity.pid, context.graceMs);
    return outcomeFromExit(readWrapperNumber(exitPath) ?? code, signal);
  });

  return {
    done,
    ready,
    watchForPrompts: true,
    async stop() {
      if (identity !== undefined) await terminateGroup(identity.pid, context.graceMs);
      await done;
    },
    async write(input, end) {
      if (stdin.destroyed || stdin.writableEnded) {
        throw new TaskStateError(
          `The stdin of task ${context.taskId} is closed; the command can no longer read input.`,
          {
            taskId: context.taskId,
          },
        );
      }
      await new Promise<void>((resolve, reject) => {
        stdin.write(input, (error) => (error ? reject(error) : resolve()));
      }).catch((error: unknown) => {
        throw new TaskStateError(
          `Could not write to the stdin of task ${context.taskId} (${describeError(error)}).`,
          {
            taskId: context.taskId,
            cause: error,
          },
        );
      });
      if (end) stdin.end();
    },
    release() {
      child.unref();
      // A pipe's stdin is a socket, which has unref; a plain Writable has none.
      if ("unref" in stdin && typeof stdin.unref === "function") stdin.unref();
    },
  };
}

/**
 * Watches a local_bash task that an earlier manager started: by pid and start time, since it is not this
 * process's child. Its stdin went with the earlier manager, so it takes no input.
 */
export function attachLocalBash(
  record: TaskRecord,
  leader: ProcessIdentity,
  context: RunnerContext,
): TaskRunner {
  const { pollMs } = context;
  const exitPath = exitStatusFile(context.taskDirectory);
  let stopping: Promise<unknown> | undefined;
  let released = false;
  const done = (async (): Promise<TaskOutcome> => {
    while (isProcessAlive(leader)) {
      await sleep(pollMs);
      // Released by close(): the next manager watches it; this one stops polling and never records an end.
      if (released) await new Promise<never>(() => undefined);
    }
    await stopping;
    await endLeftovers(leader.pid, context.graceMs);
    return outcomeFromExit(readWrapperNumber(exitPath));
  })();
  return {
    done,
    watchForPrompts: true,
    async stop() {
      if (isProcessAlive(leader)) stopping = terminateGroup(leader.pid, context.graceMs);
      await stopping;
      await done;
    },
    release() {
      released = true;
    },
    async write() {
      throw new TaskStateError(
        `Task ${record.id} was started by a manager that has since exited; its stdin closed with that manager, so it takes no input. Stop it and start it again to answer it.`,
        { taskId: record.id },
      );
    },
  };
}

/**
 * The leader of a local_bash task whose manager died before recording it: the pid the wrapper wrote, if that
 * process still runs the wrapper of this very task (its command line names the task's folder).
 */
function leaderFromPidFile(taskFolder: string): ProcessIdentity | undefined {
  const pid = readWrapperNumber(pidFile(taskFolder));
  if (pid === undefined) return undefined;
  const identity = readProcessIdentity(pid);
  if (identity === undefined) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(pidFile(taskFolder)) ? identity : undefined;
  } catch {
    return undefined;
  }
}

/** A shell command in its own process group: the one type whose work outlives its manager. */
export const localBashTaskType = defineTaskType<LocalBashSpec>({
  type: "local_bash",
  idPrefix: "bash",
  validate(spec, runsHere) {
    requireText(spec, "command");
    optionalText(spec, "shell");
    checkCommandFields(spec, runsHere);
    checkEnvNames(spec.envFrom, "envFrom");
  },
  describe: (spec) => spec.command,
  cwd: (spec) => spec.cwd,
  toPortable: (spec) => ({ ...spec }),
  start: startLocalBash,
  attach(record, context) {
    const leader = record.process ?? leaderFromPidFile(context.taskDirectory);
    if (leader !== undefined && isProcessAlive(leader)) return attachLocalBash(record, leader, context);
    // Gone while nobody watched: how it ended is what its wrapper wrote, if it got to.
    return outcomeFromExit(readWrapperNumber(exitStatusFile(context.taskDirectory)));
  },
});
