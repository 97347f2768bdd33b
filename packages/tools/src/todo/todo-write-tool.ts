import type { Tool } from "@unforget/core";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { ToolCallError } from "../tool-errors.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { setTodos, type TodoItem } from "./todo-state.ts";

const STATUSES: readonly TodoItem["status"][] = ["pending", "in_progress", "completed"];

const DESCRIPTION = `Creates and updates the todo list for the current work; each call sends the whole list.
- Use it for work of three or more steps, or when the user gives several tasks; skip it for a single simple step.
- Keep exactly one item in_progress while working; mark an item completed as soon as it is done, not in batches.
- content says what to do ("Run the tests"); activeForm says it while it happens ("Running the tests").
- The list is kept through compactions of the conversation; once every item is completed it is cleared.`;

function readTodos(input: Record<string, unknown>): TodoItem[] {
  const todos = input.todos;
  if (!Array.isArray(todos)) {
    throw new ToolCallError(
      'TodoWrite: "todos" is required and must be an array of {content, status, activeForm}.',
    );
  }
  return todos.map((item: unknown, index) => {
    const record = (item ?? {}) as Record<string, unknown>;
    const { content, status, activeForm } = record;
    if (typeof content !== "string" || content.trim() === "") {
      throw new ToolCallError(`TodoWrite: todos[${index}].content must be a non-empty string.`);
    }
    if (typeof status !== "string" || !STATUSES.includes(status as TodoItem["status"])) {
      throw new ToolCallError(`TodoWrite: todos[${index}].status must be one of ${STATUSES.join(", ")}.`);
    }
    if (typeof activeForm !== "string" || activeForm.trim() === "") {
      throw new ToolCallError(`TodoWrite: todos[${index}].activeForm must be a non-empty string.`);
    }
    return { content, status: status as TodoItem["status"], activeForm };
  });
}

/** Creates the TodoWrite tool: the list lives in the session's tool state (`todosOf`). */
export function createTodoWriteTool(): Tool {
  return defineBuiltinTool({
    name: BUILTIN_TOOL_NAMES.todoWrite,
    description: DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: {
        todos: {
          type: "array",
          description: "The updated todo list.",
          items: {
            type: "object",
            properties: {
              content: { type: "string", minLength: 1 },
              status: { type: "string", enum: [...STATUSES] },
              activeForm: { type: "string", minLength: 1 },
            },
            required: ["content", "status", "activeForm"],
            // Older Claude Code lists also carried `id` and `priority`: accepted, and dropped.
          },
        },
      },
      required: ["todos"],
      additionalProperties: false,
    },
    // It changes the session's own state only, so plan mode allows it.
    readOnly: true,
    // The list is the session's state, shown again after every compaction.
    resultRetention: "reproducible",
    concurrencySafe: false,
    async run(input, context) {
      const todos = readTodos(input);
      // A finished list has nothing left to bring back after a compaction: it is cleared, as Claude Code does.
      if (todos.length > 0 && todos.every((todo) => todo.status === "completed")) {
        setTodos(context.sessionState, []);
        return `All ${todos.length} todos are completed; the list is cleared.`;
      }
      setTodos(context.sessionState, todos);
      const counts = STATUSES.map(
        (status) => [status, todos.filter((todo) => todo.status === status).length] as const,
      )
        .filter(([, count]) => count > 0)
        .map(([status, count]) => `${count} ${status.replace("_", " ")}`);
      return todos.length === 0
        ? "The todo list is now empty."
        : `Todo list updated: ${counts.join(", ")}. Keep it current as you work.`;
    },
  });
}
