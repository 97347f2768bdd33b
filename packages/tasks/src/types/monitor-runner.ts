import { setTimeout as sleep } from "node:timers/promises";
import { type GroupChild, spawnShellCommand, terminateGroup } from "@unforget/process";
import { createOutputWriter } from "../output/task-output-writer.ts";
import { describeError, TaskNotPortableError } from "../task/task-errors.ts";
import type { McpMonitorSpec, MonitorSpec } from "../task/task-spec.ts";
import type { McpMonitorClient } from "./task-capabilities.ts";
import type { RunnerContext, TaskOutcome, TaskRunner } from "./task-runner.ts";
import { defineTaskType } from "./task-type.ts";
import {
  checkCommandFields,
  checkDuration,
  type Fields,
  fail,
  requireFunction,
  requireText,
} from "./validate-task-spec.ts";

const DEFAULTS = { intervalMs: 30_000, checkTimeoutMs: 10_000, failuresBeforeRestart: 2, maxRestarts: 3 };

interface Server {
  group: GroupChild;
  mcp?: McpMonitorClient;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/** Runs `check` with its own abort signal, failing it after `timeoutMs`. */
async function withTimeout(
  check: (signal: AbortSignal) => Promise<void>,
  timeoutMs: number,
  outer: AbortSignal,
): Promise<void> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  outer.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    await Promise.race([check(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener("abort", onAbort);
  }
}

/** A check command: healthy when it exits 0. Its output is dropped; its whole group dies on abort. */
async function runCheckCommand(
  command: string,
  spec: MonitorSpec,
  baseEnv: RunnerContext["env"],
  signal: AbortSignal,
): Promise<void> {
  const { identity, exited } = spawnShellCommand(command, {
    cwd: spec.cwd,
    env: spec.env,
    baseEnv,
    outputPath: "/dev/null",
  });
  const kill = () => {
    if (identity !== undefined) void terminateGroup(identity.pid, 0);
  };
  signal.addEventListener("abort", kill, { once: true });
  const { code, signal: killedBy, error } = await exited;
  signal.removeEventListener("abort", kill);
  if (error !== undefined) throw error;
  if (code !== 0)
    throw new Error(
      `the check command ${killedBy ? `was killed by ${killedBy}` : `exited with code ${code}`}`,
    );
}

/** What a running monitor holds: its spec and settings, its stop signal, its log, and the server it started. */
interface MonitorState {
  readonly spec: MonitorSpec | McpMonitorSpec;
  readonly context: RunnerContext;
  readonly settings: { intervalMs: number; checkTimeoutMs: number; maxRestarts: number };
  /** Failed checks in a row before a restart. */
  readonly threshold: number;
  readonly canRestart: boolean;
  readonly controller: AbortController;
  /** Appends a "[monitor] …" line to the task's output; never rejects. */
  readonly note: (text: string) => Promise<unknown>;
  server: Server | undefined;
}

/** Starts the server command (when the monitor has one), and for `monitor_mcp` connects and initializes. */
async function launchServer(state: MonitorState): Promise<void> {
  const { spec, context, settings } = state;
  if (spec.command === undefined) return;
  const mcp = spec.type === "monitor_mcp";
  const group = spawnShellCommand(spec.command, {
    cwd: spec.cwd,
    env: spec.env,
    baseEnv: context.env,
    outputPath: context.outputPath,
    stdout: mcp ? "pipe" : "output",
  });
  const current: Server = { group };
  state.server = current;
  void group.exited.then(({ code, signal }) => {
    current.exit = { code, signal };
  });
  if (group.identity !== undefined) await context.recordProcess(group.identity);
  if (mcp) {
    // validate() refused a command without a client: connectMcp is there.
    current.mcp = context.capabilities.connectMcp!(group.child.stdin!, group.child.stdout!);
    // Starting a server takes longer than answering a ping: the handshake gets at least 10 s.
    await current.mcp.initialize(Math.max(settings.checkTimeoutMs, 10_000));
  }
}

async function shutdownServer(state: MonitorState): Promise<void> {
  const current = state.server;
  state.server = undefined;
  if (current?.group.identity !== undefined)
    await terminateGroup(current.group.identity.pid, state.context.graceMs);
}

/** One health check: rejects when the server exited or the check (command, function or MCP ping) fails. */
async function checkHealth(state: MonitorState, signal: AbortSignal): Promise<void> {
  const { spec, server } = state;
  if (server?.exit !== undefined) {
    throw new Error(
      `the server exited (${server.exit.signal ? `killed by ${server.exit.signal}` : `code ${server.exit.code}`})`,
    );
  }
  if (spec.type === "monitor") {
    await (typeof spec.check === "string"
      ? runCheckCommand(spec.check, spec, state.context.env, signal)
      : spec.check(signal));
  } else
    await (server?.mcp !== undefined
      ? server.mcp.ping(2 * state.settings.checkTimeoutMs)
      : spec.ping!(signal));
}

/** Waits for the next check; wakes early when the server exits, so that a crash is restarted at once. */
function waitForNextCheck(state: MonitorState): Promise<unknown> {
  const interval = sleep(state.settings.intervalMs, undefined, {
    signal: state.controller.signal,
    ref: false,
  }).catch(() => undefined);
  return state.server === undefined ? interval : Promise.race([interval, state.server.group.exited]);
}

/** Restarts the server (its command again, or the app's `restart`). */
async function restartServer(state: MonitorState): Promise<void> {
  if (state.spec.command !== undefined) {
    await shutdownServer(state);
    await launchServer(state);
  } else await state.spec.restart!();
}

/** Checks until stopped; restarts after `threshold` failures in a row, and fails once the restarts are used up. */
async function superviseServer(state: MonitorState): Promise<TaskOutcome> {
  const { spec, settings, threshold, canRestart, controller } = state;
  let failures = 0;
  let restarts = 0;
  let reason = "";
  const failed = (error: unknown) => {
    reason = describeError(error);
    return state.note(
      `${state.server === undefined && spec.command !== undefined ? "start" : "check"} failed: ${reason}`,
    );
  };
  await launchServer(state).catch(async (error: unknown) => {
    failures = threshold;
    await failed(error);
  });
  while (!controller.signal.aborted) {
    if (failures < threshold) {
      await waitForNextCheck(state);
      if (controller.signal.aborted) break;
      try {
        await withTimeout((signal) => checkHealth(state, signal), settings.checkTimeoutMs, controller.signal);
        failures = 0;
        continue;
      } catch (error) {
        if (controller.signal.aborted) break;
        failures += 1;
        await failed(error);
      }
      if (failures < threshold && state.server?.exit === undefined) continue;
    }
    if (!canRestart || restarts >= settings.maxRestarts) {
      return {
        status: "failed",
        endReason: "exit",
        error: canRestart
          ? `still unhealthy after ${restarts} restarts: ${reason}`
          : `unhealthy, and it has nothing to restart: ${reason}`,
      };
    }
    restarts += 1;
    await state.note(`restarting (${restarts}/${settings.maxRestarts})`);
    failures = 0;
    try {
      await restartServer(state);
    } catch (error) {
      failures = threshold;
      await failed(error);
    }
  }
  return { status: "completed", endReason: "stopped" };
}

/**
 * A monitor's loop: start the server (if it has one), check it every `intervalMs`, and after
 * `failuresBeforeRestart` failed checks (or at once when the server exits) restart it, at most `maxRestarts`
 * times; then the task fails. Its log lines ("[monitor] …") share the output file with the server's output.
 */
export function startMonitor(spec: MonitorSpec | McpMonitorSpec, context: RunnerContext): TaskRunner {
  const log = createOutputWriter(context.outputPath, context.taskId, context.assertHeld);
  const state: MonitorState = {
    spec,
    context,
    settings: {
      intervalMs: spec.intervalMs ?? DEFAULTS.intervalMs,
      checkTimeoutMs: spec.checkTimeoutMs ?? DEFAULTS.checkTimeoutMs,
      maxRestarts: spec.maxRestarts ?? DEFAULTS.maxRestarts,
    },
    threshold: spec.failuresBeforeRestart ?? DEFAULTS.failuresBeforeRestart,
    canRestart: spec.command !== undefined || spec.restart !== undefined,
    controller: new AbortController(),
    note: (text) => log.line(`[monitor] ${text}`).catch(() => undefined),
    server: undefined,
  };
  const done = (async (): Promise<TaskOutcome> => {
    try {
      return await superviseServer(state);
    } finally {
      await shutdownServer(state);
      await log.close();
    }
  })();
  return {
    done,
    watchForPrompts: false,
    async stop() {
      state.controller.abort();
      await done;
    },
  };
}

function checkMonitor(spec: Fields, runsHere: boolean): void {
  checkDuration(spec.intervalMs, "intervalMs");
  checkDuration(spec.checkTimeoutMs, "checkTimeoutMs");
  checkDuration(spec.failuresBeforeRestart, "failuresBeforeRestart");
  checkDuration(spec.maxRestarts, "maxRestarts", { min: 0 });
  if (spec.restart !== undefined) requireFunction(spec.restart, "restart", "called to restart the server");
  if (spec.command !== undefined) requireText(spec, "command");
  checkCommandFields(spec, runsHere);
}

/** Keeps a server healthy with a check command or function; portable when both check and restart are commands. */
export const monitorTaskType = defineTaskType<MonitorSpec>({
  type: "monitor",
  idPrefix: "monitor",
  validate(spec, runsHere) {
    checkMonitor(spec, runsHere);
    if (typeof spec.check === "string") requireText(spec, "check");
    else
      requireFunction(
        spec.check,
        "check",
        "a shell command string or a function that rejects when unhealthy",
      );
  },
  describe: (spec) =>
    `monitor: ${spec.command ?? (typeof spec.check === "string" ? spec.check : "health check")}`,
  cwd: (spec) => spec.cwd,
  toPortable(spec) {
    const field =
      typeof spec.check !== "string" ? "check" : spec.restart !== undefined ? "restart" : undefined;
    if (field !== undefined) {
      throw new TaskNotPortableError(
        `${field} is a function, which cannot be sent to a worker on another machine; give the monitor a check command (exit 0 is healthy) and a server command to restart.`,
        { type: "monitor", field },
      );
    }
    return { ...spec };
  },
  start: startMonitor,
});

/** Keeps an MCP server healthy with the protocol's own ping. */
export const mcpMonitorTaskType = defineTaskType<McpMonitorSpec>({
  type: "monitor_mcp",
  idPrefix: "mcp",
  validate(spec, runsHere, capabilities) {
    checkMonitor(spec, runsHere);
    if ((spec.command === undefined) === (spec.ping === undefined)) {
      fail(
        "command",
        "a monitor_mcp task needs exactly one of `command` (a stdio server to start) or `ping`.",
      );
    } else if (spec.ping !== undefined) requireFunction(spec.ping, "ping", "sends one MCP ping");
    else if (runsHere && capabilities.connectMcp === undefined) {
      fail(
        "command",
        "pinging a stdio MCP server needs an MCP client, which @unforget/tasks does not carry: install @unforget/mcp and pass its createMcpStdioClient as createTaskManager({ connectMcp }), or give the task a `ping` function instead of a command.",
      );
    }
  },
  describe: (spec) => `MCP monitor: ${spec.command ?? "ping"}`,
  cwd: (spec) => spec.cwd,
  start: startMonitor,
});
