import { isAbsolute, resolve } from "node:path";
import type { Tool, ToolContext, ToolOutput } from "@unforget/core";
import type { TaskManager } from "../manager/task-manager.ts";
import { TaskInputError } from "../task/task-errors.ts";
import { formatBytes } from "./format.ts";
import { renderTaskStatus } from "./task-attachments.ts";
import { TASK_TOOL_NAMES } from "./task-tool-names.ts";

export interface TaskToolsOptions {
  /** Most output bytes one task_output call returns (default 30 000): the agent's context is the limit. */
  maxOutputBytes?: number;
}

/** Errors whose message tells the model what to change: they become error results, not rejections. */
const MODEL_ERROR_CODES: ReadonlySet<string> = new Set([
  "task_invalid_input",
  "task_not_found",
  "task_state",
  "task_not_portable",
]);

type Field = { type: "string" | "integer" | "boolean"; description: string; minimum?: number };
type Input = Record<string, unknown>;

function schema(properties: Record<string, Field>, required: string[]): Record<string, unknown> {
  return { type: "object", properties, required, additionalProperties: false };
}

/** Checks the model's input against a flat schema; the error names the tool, the field and the fix. */
function checkInput(
  tool: string,
  input: unknown,
  properties: Record<string, Field>,
  required: string[],
): Input {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new TaskInputError(
      `${tool}: the input must be a JSON object with ${Object.keys(properties).join(", ") || "no fields"}.`,
      { field: "input" },
    );
  }
  const fields = input as Input;
  for (const key of Object.keys(fields)) {
    if (!(key in properties)) {
      throw new TaskInputError(
        `${tool}: unknown field "${key}"; the fields are ${Object.keys(properties).join(", ") || "none"}.`,
        { field: key },
      );
    }
  }
  for (const [key, field] of Object.entries(properties)) {
    const value = fields[key];
    if (value === undefined) {
      if (required.includes(key))
        throw new TaskInputError(`${tool}: "${key}" is required (${field.description}).`, { field: key });
      continue;
    }
    const ok =
      field.type === "integer"
        ? Number.isSafeInteger(value) && (value as number) >= (field.minimum ?? Number.NEGATIVE_INFINITY)
        : field.type === "string"
          ? typeof value === "string" && (value !== "" || !required.includes(key))
          : typeof value === "boolean";
    if (!ok) {
      const expected =
        field.type === "integer"
          ? `a whole number${field.minimum === undefined ? "" : ` ≥ ${field.minimum}`}`
          : `a ${field.type === "string" && required.includes(key) ? "non-empty " : ""}${field.type}`;
      throw new TaskInputError(
        `${tool}: "${key}" must be ${expected} (got ${JSON.stringify(value)}); it is ${field.description}.`,
        { field: key },
      );
    }
  }
  return fields;
}

interface TaskToolInit {
  name: string;
  description: string;
  properties: Record<string, Field>;
  required: string[];
  readOnly: boolean;
  permissionSubject?: Tool["permissionSubject"];
  run(input: Input, context: ToolContext): Promise<string>;
}

/**
 * A task tool in the session's contract. The input is checked again here (a caller may skip the session's
 * schema check), and a task error the model can act on resolves as an error result with its message.
 */
function defineTool(init: TaskToolInit): Tool {
  const { name, properties, required } = init;
  return {
    name,
    description: init.description,
    inputSchema: schema(properties, required),
    readOnly: init.readOnly,
    concurrencySafe: init.readOnly,
    ...(init.permissionSubject === undefined ? {} : { permissionSubject: init.permissionSubject }),
    async execute(input, context): Promise<ToolOutput> {
      try {
        return {
          content: await init.run(checkInput(name, input ?? {}, properties, required), context),
          isError: false,
        };
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === "string" && MODEL_ERROR_CODES.has(code)) {
          return { content: (error as Error).message, isError: true };
        }
        throw error;
      }
    },
  };
}

const ID: Field = {
  type: "string",
  description: "the task id, as task_start returned it (e.g. bash-k3j4h5g6a1)",
};

/** task_start: a shell command in the background, its cwd resolved against the session's directory. */
function startTool(manager: TaskManager): Tool {
  return defineTool({
    name: TASK_TOOL_NAMES.start,
    description:
      "Start a shell command in the background. It gets its own process group and no terminal; its output is saved to a file. You are told when it finishes, fails, passes its deadline, or seems to wait for input. Use it for builds, test suites, servers and anything slow.",
    properties: {
      command: { type: "string", description: "the shell command (bash)" },
      description: { type: "string", description: "a short label for the task list" },
      cwd: {
        type: "string",
        description: "the working directory (must exist; relative to the session's directory)",
      },
      timeout_ms: {
        type: "integer",
        minimum: 1,
        description: "stop the command after this many milliseconds",
      },
      deadline_ms: {
        type: "integer",
        minimum: 1,
        description: "be notified if it still runs after this many milliseconds",
      },
    },
    required: ["command"],
    readOnly: false,
    // Permission rules for commands (`task_start(npm test:*)`) match the command, as for the Bash tool.
    permissionSubject: (input) =>
      typeof input.command === "string" ? { kind: "command", command: input.command } : undefined,
    async run(input, context) {
      const cwd = input.cwd as string | undefined;
      const id = await manager.start({
        type: "local_bash",
        command: input.command as string,
        description: input.description as string | undefined,
        cwd: cwd === undefined ? context.cwd : isAbsolute(cwd) ? cwd : resolve(context.cwd, cwd),
        timeoutMs: input.timeout_ms as number | undefined,
        deadlineMs: input.deadline_ms as number | undefined,
      });
      return `Started task ${id}. It runs in the background; read its output with ${TASK_TOOL_NAMES.output} {"id": "${id}", "offset": 0}.`;
    },
  });
}

/** task_output: the output from a byte offset, at most `maxOutputBytes`, and where to continue. */
function outputTool(manager: TaskManager, maxOutputBytes: number): Tool {
  return defineTool({
    name: TASK_TOOL_NAMES.output,
    description: `Read a background task's output from a byte offset (0 for the start); returns at most ${maxOutputBytes} bytes and the offset to continue from.`,
    properties: {
      id: ID,
      offset: {
        type: "integer",
        minimum: 0,
        description: "the byte offset to read from: 0, or next_offset of the previous read",
      },
    },
    required: ["id"],
    readOnly: true,
    async run(input) {
      const id = input.id as string;
      const offset = (input.offset as number | undefined) ?? 0;
      const chunk = await manager.readOutput(id, offset, { maxBytes: maxOutputBytes });
      const task = await manager.get(id);
      const state = chunk.done
        ? `The task has ended (${task.status}${task.exitCode === undefined ? "" : `, exit code ${task.exitCode}`}) and all ${formatBytes(chunk.nextOffset)} of its output has been read.`
        : `next_offset: ${chunk.nextOffset} (${task.status}; ${formatBytes(task.outputBytes)} of output so far). Call ${TASK_TOOL_NAMES.output} again with this offset for more.`;
      return `${chunk.data === "" ? "(no new output)" : chunk.data}\n---\n${state}`;
    },
  });
}

/** task_input: text to a task's stdin, optionally closing it. */
function inputTool(manager: TaskManager): Tool {
  return defineTool({
    name: TASK_TOOL_NAMES.input,
    description:
      "Send text to a background task's stdin, e.g. to answer a prompt it is waiting on. Include the newline that submits the answer.",
    properties: {
      id: ID,
      input: { type: "string", description: 'the text to send, e.g. "y\\n"' },
      close_stdin: { type: "boolean", description: "close stdin afterwards (end of input)" },
    },
    required: ["id", "input"],
    readOnly: false,
    async run(input) {
      await manager.write(input.id as string, input.input as string, { end: input.close_stdin === true });
      return `Sent ${JSON.stringify(input.input)} to task ${input.id as string}.`;
    },
  });
}

/** task_stop: ends a running task's process group; says so when it had already ended. */
function stopTool(manager: TaskManager): Tool {
  return defineTool({
    name: TASK_TOOL_NAMES.stop,
    description:
      "Stop a background task: its whole process group gets SIGTERM, then SIGKILL after a grace period.",
    properties: { id: ID },
    required: ["id"],
    readOnly: false,
    async run(input) {
      const before = await manager.get(input.id as string);
      if (before.status !== "running") return `Task ${before.id} had already ended (${before.status}).`;
      const task = await manager.stop(before.id);
      return task.status === "killed"
        ? `Stopped task ${task.id}.`
        : `Task ${task.id} ended (${task.status}) before it was stopped.`;
    },
  });
}

/** task_list: the running and recently ended tasks. */
function listTool(manager: TaskManager): Tool {
  return defineTool({
    name: TASK_TOOL_NAMES.list,
    description: "List running and recently ended background tasks.",
    properties: {},
    required: [],
    readOnly: true,
    async run() {
      return renderTaskStatus(await manager.list()) || "No background tasks are running or ended recently.";
    },
  });
}

/** The five tools an agent uses to run and follow background tasks, in core's `Tool` contract. */
export function createTaskTools(manager: TaskManager, options: TaskToolsOptions = {}): Tool[] {
  const maxOutputBytes = options.maxOutputBytes ?? 30_000;
  return [
    startTool(manager),
    outputTool(manager, maxOutputBytes),
    inputTool(manager),
    stopTool(manager),
    listTool(manager),
  ];
}
