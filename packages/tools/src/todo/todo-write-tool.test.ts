import { describe, expect, it } from "vitest";
import { createToolHarness } from "../__fixtures__/tool-harness.ts";
import { todosOf } from "./todo-state.ts";
import { createTodoWriteTool } from "./todo-write-tool.ts";

describe("TodoWrite", () => {
  it("keeps the whole list in the session's tool state, replacing it on each call", async () => {
    const harness = await createToolHarness();
    const todoWrite = createTodoWriteTool();
    expect(todosOf(harness.state)).toEqual([]);
    const todos = [
      { content: "Run the tests", status: "completed", activeForm: "Running the tests" },
      { content: "Fix the parser", status: "in_progress", activeForm: "Fixing the parser" },
      { content: "Update the docs", status: "pending", activeForm: "Updating the docs" },
    ];
    expect(await harness.call(todoWrite, { todos })).toEqual({
      content: "Todo list updated: 1 pending, 1 in progress, 1 completed. Keep it current as you work.",
      isError: false,
    });
    expect(todosOf(harness.state)).toEqual(todos);
    const done = todos.map((todo) => ({ ...todo, status: "completed" }));
    expect(harness.text(await harness.call(todoWrite, { todos: done }))).toBe(
      "All 3 todos are completed; the list is cleared.",
    );
    expect(todosOf(harness.state)).toEqual([]);
    await harness.call(todoWrite, { todos });
    await harness.call(todoWrite, { todos: [] });
    expect(todosOf(harness.state)).toEqual([]);
    const bad = await harness.call(todoWrite, { todos: [{ content: "x", status: "done", activeForm: "x" }] });
    expect(bad).toEqual({
      content: "TodoWrite: todos[0].status must be one of pending, in_progress, completed.",
      isError: true,
    });
    expect(todoWrite.readOnly).toBe(true);
    await harness.close();
  });
});
