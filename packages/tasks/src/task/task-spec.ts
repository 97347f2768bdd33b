import type { MailboxEndpoint } from "../mailbox/mailbox.ts";
import type { TaskOutputWriter } from "../output/task-output-writer.ts";
import type { RemoteAgentConnector } from "../types/remote-agent.ts";

/** Options every task type accepts. */
export interface TaskSpecBase {
  /** One line for `list()` and notifications; defaults to the command or the job's name. */
  description?: string;
  /** Stop the task (SIGTERM, then SIGKILL) once it has run this long; it then fails with reason "timeout". */
  timeoutMs?: number;
  /** Notify once ("deadline") if the task still runs after this long; defaults to the manager's `deadlineMs`. */
  deadlineMs?: number;
}

/** A shell command in its own process group; stdout and stderr go to the output file, stdin is a pipe. */
export interface LocalBashSpec extends TaskSpecBase {
  type: "local_bash";
  command: string;
  /** Working directory (must exist); defaults to the manager's process cwd. */
  cwd?: string;
  /** Added to (and overriding) the manager's environment. Values travel with the spec: no secrets here. */
  env?: Record<string, string>;
  /**
   * Names of variables the command takes from the environment of the machine that runs it (a token, a
   * password). A manager's commands inherit its whole environment anyway; a worker passes only these, and
   * only the ones its allow-list permits.
   */
  envFrom?: string[];
  /** The shell that runs `command` with `-c`; defaults to /bin/bash, or /bin/sh where bash is missing. */
  shell?: string;
}

/** What an in-process job (agent, teammate, workflow step) receives. */
export interface TaskJobContext {
  taskId: string;
  /** The prompt the task was started with, if any. */
  prompt?: string;
  /** Appends to the task's output file, where readers and the stall watch see it. */
  output: TaskOutputWriter;
  /** Aborted when the task is stopped or times out: stop promptly, the task is abandoned after the grace period. */
  signal: AbortSignal;
  /** Messages to and from the coordinator and teammates. */
  mailbox: MailboxEndpoint;
}

/** An agent loop or any other in-process job; a string it resolves to is its report (the task's `result`). */
export type TaskJob = (context: TaskJobContext) => Promise<unknown>;

/** An agent loop the caller supplies, with its own context, that reports back when it ends. */
export interface LocalAgentSpec extends TaskSpecBase {
  type: "local_agent";
  description: string;
  prompt?: string;
  run: TaskJob;
}

/** A worker of the coordinator in this process, talking to it (and its teammates) over the mailbox. */
export interface InProcessTeammate {
  /** Shown in `list()`; unique names make messages easy to follow. */
  readonly name: string;
  /** Called once when the task starts; resolves with the teammate's final report. */
  run: TaskJob;
}

export interface InProcessTeammateSpec extends TaskSpecBase {
  type: "in_process_teammate";
  teammate: InProcessTeammate;
  prompt?: string;
}

/** An agent on another machine, driven over the mailbox protocol. */
export interface RemoteAgentSpec extends TaskSpecBase {
  type: "remote_agent";
  description: string;
  prompt: string;
  connector: RemoteAgentConnector;
}

/** A workflow step that runs a shell command; its stdin is the previous step's output. */
export interface CommandWorkflowStep {
  name: string;
  command: string;
  cwd?: string;
  env?: Record<string, string>;
}

/** A workflow step that runs in-process; a string it resolves to is appended as its output. */
export interface FunctionWorkflowStep {
  name: string;
  run(context: WorkflowStepContext): Promise<unknown>;
}

export interface WorkflowStepContext extends Omit<TaskJobContext, "prompt" | "mailbox"> {
  /** The previous step's output (empty for the first step). Reads it whole: mind its size. */
  input(): Promise<string>;
}

export type WorkflowStep = CommandWorkflowStep | FunctionWorkflowStep;

/** Scripted steps run in order, each fed the previous one's output; the first failing step fails the task. */
export interface LocalWorkflowSpec extends TaskSpecBase {
  type: "local_workflow";
  description: string;
  steps: WorkflowStep[];
}

/** A health check: resolves when healthy, rejects (with the reason) when not. */
export type HealthCheck = (signal: AbortSignal) => Promise<void>;

/** Options shared by both monitors. */
export interface MonitorOptions {
  /** Between two checks (default 30 000). */
  intervalMs?: number;
  /** A check that takes longer fails (default 10 000). */
  checkTimeoutMs?: number;
  /** Consecutive failed checks before a restart (default 2). */
  failuresBeforeRestart?: number;
  /** Restarts before the monitor gives up and fails (default 3). */
  maxRestarts?: number;
  /** Restarts a server the monitor did not start (called instead of restarting `command`). */
  restart?: () => Promise<void>;
}

/** Keeps a server (or any long-running command) healthy: checks it periodically, restarts it on failure. */
export interface MonitorSpec extends TaskSpecBase, MonitorOptions {
  type: "monitor";
  /** The server to run and restart; omit it to watch something that `restart` (or nobody) restarts. */
  command?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** A shell command (exit 0 is healthy) or a function. */
  check: string | HealthCheck;
}

/** Keeps an MCP server healthy with the protocol's own `ping`. */
export interface McpMonitorSpec extends TaskSpecBase, MonitorOptions {
  type: "monitor_mcp";
  /** A stdio MCP server to start, initialise and ping over its stdin and stdout (stderr goes to the output). */
  command?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** For a server the app is connected to itself (e.g. over HTTP): sends one MCP ping. */
  ping?: HealthCheck;
}

/** The part of a dream task the app supplies (the memory package's consolidation, say). */
export interface DreamJob {
  /** Shown in `list()` and notifications. */
  readonly name: string;
  /** Runs the consolidation once; resolves with a summary of what changed, as a string or `{ summary }` (the task's `result`). */
  run(context: DreamJobContext): Promise<unknown>;
}

export interface DreamJobContext {
  /** Aborted when the task is stopped or times out. */
  signal: AbortSignal;
  /** Appends one line of progress to the task's output. */
  log(line: string): Promise<void>;
}

/** Memory consolidation between sessions, run as a background task. */
export interface DreamSpec extends TaskSpecBase {
  type: "dream";
  /** The job, or the name of a job the running machine was given (`createDreamTaskType({ jobs })`). */
  job: DreamJob | string;
}

/** What `start()` accepts. */
export type TaskSpec =
  | LocalBashSpec
  | LocalAgentSpec
  | InProcessTeammateSpec
  | RemoteAgentSpec
  | LocalWorkflowSpec
  | MonitorSpec
  | McpMonitorSpec
  | DreamSpec;
