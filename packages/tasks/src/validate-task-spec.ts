import { statSync } from "node:fs";
import { TaskInputError } from "./task-errors.ts";
import { TASK_TYPES, type TaskType } from "./task-record.ts";
import type { TaskSpec } from "./task-spec.ts";

type Fields = Record<string, unknown>;

function fail(field: string, message: string): never {
  throw new TaskInputError(`${field}: ${message}`, { field });
}

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requireText(spec: Fields, key: string, path = key): string {
  const value = spec[key];
  if (typeof value !== "string" || value.trim() === "")
    fail(path, `must be a non-empty string (got ${JSON.stringify(value)}).`);
  return value;
}

function optionalText(spec: Fields, key: string, path = key): void {
  if (spec[key] !== undefined && typeof spec[key] !== "string")
    fail(path, `must be a string when given (got ${typeof spec[key]}).`);
}

function requireFunction(value: unknown, path: string, what: string): void {
  if (typeof value !== "function") fail(path, `must be a function (${what}).`);
}

/** A whole number of milliseconds ≥ `min`; `Infinity` only where `infinite` allows it. */
export function checkDuration(
  value: unknown,
  path: string,
  options: { min?: number; infinite?: boolean } = {},
): void {
  if (value === undefined) return;
  const min = options.min ?? 1;
  const ok =
    typeof value === "number" &&
    ((options.infinite === true && value === Number.POSITIVE_INFINITY) ||
      (Number.isInteger(value) && value >= min));
  if (!ok) {
    fail(
      path,
      `must be a whole number of milliseconds ≥ ${min}${options.infinite ? " (or Infinity to turn it off)" : ""}; got ${String(value)}.`,
    );
  }
}

function checkEnv(value: unknown, path: string): void {
  if (value === undefined) return;
  if (!isObject(value) || Object.values(value).some((entry) => typeof entry !== "string")) {
    fail(path, "must map variable names to string values.");
  }
}

function checkCwd(value: unknown, path: string): void {
  if (value === undefined) return;
  if (typeof value !== "string" || value === "") fail(path, "must be a directory path.");
  let isDirectory = false;
  try {
    isDirectory = statSync(value).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory)
    fail(path, `${JSON.stringify(value)} is not an existing directory; create it or pass another cwd.`);
}

function checkCommandFields(spec: Fields, prefix = ""): void {
  checkCwd(spec.cwd, `${prefix}cwd`);
  checkEnv(spec.env, `${prefix}env`);
}

function checkWorkflow(spec: Fields): void {
  requireText(spec, "description");
  const steps = spec.steps;
  if (!Array.isArray(steps) || steps.length === 0) fail("steps", "must be a non-empty array of steps.");
  steps.forEach((step: unknown, index) => {
    const path = `steps[${index}]`;
    if (!isObject(step)) fail(path, "must be an object with a name and either a command or a run function.");
    requireText(step, "name", `${path}.name`);
    if (typeof step.command === "string") {
      requireText(step, "command", `${path}.command`);
      checkCommandFields(step, `${path}.`);
    } else requireFunction(step.run, `${path}.run`, "give a step either a command string or a run function");
  });
}

function checkMonitor(spec: Fields): void {
  checkDuration(spec.intervalMs, "intervalMs");
  checkDuration(spec.checkTimeoutMs, "checkTimeoutMs");
  checkDuration(spec.failuresBeforeRestart, "failuresBeforeRestart");
  checkDuration(spec.maxRestarts, "maxRestarts", { min: 0 });
  if (spec.restart !== undefined) requireFunction(spec.restart, "restart", "called to restart the server");
  if (spec.command !== undefined) requireText(spec, "command");
  checkCommandFields(spec);
  if (spec.type === "monitor") {
    if (typeof spec.check === "string") requireText(spec, "check");
    else
      requireFunction(
        spec.check,
        "check",
        "a shell command string or a function that rejects when unhealthy",
      );
  } else if ((spec.command === undefined) === (spec.ping === undefined)) {
    fail("command", "a monitor_mcp task needs exactly one of `command` (a stdio server to start) or `ping`.");
  } else if (spec.ping !== undefined) requireFunction(spec.ping, "ping", "sends one MCP ping");
}

const CHECKS: Record<TaskType, (spec: Fields) => void> = {
  local_bash(spec) {
    requireText(spec, "command");
    optionalText(spec, "shell");
    checkCommandFields(spec);
  },
  local_agent(spec) {
    requireText(spec, "description");
    optionalText(spec, "prompt");
    requireFunction(spec.run, "run", "the agent loop, called with the task's context");
  },
  in_process_teammate(spec) {
    if (!isObject(spec.teammate)) fail("teammate", "must be an object with a name and a run function.");
    requireText(spec.teammate, "name", "teammate.name");
    requireFunction(spec.teammate.run, "teammate.run", "the teammate's loop");
    optionalText(spec, "prompt");
  },
  remote_agent(spec) {
    requireText(spec, "description");
    requireText(spec, "prompt");
    if (!isObject(spec.connector)) fail("connector", "must be an object with a launch function.");
    requireFunction(spec.connector.launch, "connector.launch", "starts the agent elsewhere");
  },
  local_workflow: checkWorkflow,
  monitor: checkMonitor,
  monitor_mcp: checkMonitor,
  dream(spec) {
    if (!isObject(spec.job))
      fail("job", "must be an object with a name and a run function (the app's dream job).");
    requireText(spec.job, "name", "job.name");
    requireFunction(spec.job.run, "job.run", "runs the consolidation once");
  },
};

/** Checks a spec before anything is started; throws `TaskInputError` naming the first bad field. */
export function validateTaskSpec(spec: unknown): asserts spec is TaskSpec {
  if (!isObject(spec))
    fail("spec", 'start() needs an object such as { type: "local_bash", command: "npm test" }.');
  if (!TASK_TYPES.includes(spec.type as TaskType)) {
    fail("type", `must be one of ${TASK_TYPES.join(", ")} (got ${JSON.stringify(spec.type)}).`);
  }
  optionalText(spec, "description");
  checkDuration(spec.timeoutMs, "timeoutMs");
  checkDuration(spec.deadlineMs, "deadlineMs", { infinite: true });
  CHECKS[spec.type as TaskType](spec);
}

/** The one-line description a task is listed with. */
export function describeSpec(spec: TaskSpec): string {
  if (spec.description !== undefined && spec.description.trim() !== "") return spec.description.trim();
  switch (spec.type) {
    case "local_bash":
      return spec.command;
    case "in_process_teammate":
      return spec.teammate.name;
    case "dream":
      return spec.job.name;
    case "monitor":
      return `monitor: ${spec.command ?? (typeof spec.check === "string" ? spec.check : "health check")}`;
    case "monitor_mcp":
      return `MCP monitor: ${spec.command ?? "ping"}`;
    default:
      return spec.description;
  }
}
