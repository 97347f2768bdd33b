import type { ToolSessionState } from "@unforget/core";

/** One item of the model's todo list (Claude Code's TodoWrite shape). */
export interface TodoItem {
  /** What to do, in the imperative ("Run the tests"). */
  readonly content: string;
  readonly status: "pending" | "in_progress" | "completed";
  /** The same in the present continuous, shown while it is in progress ("Running the tests"). */
  readonly activeForm: string;
}

const TODOS = Symbol("@unforget/tools/todos");

/**
 * The todo list as TodoWrite last set it in this session (empty before the first call). Feeds compact's todos
 * rehydration: `createTodosProvider({ todos: () => todosOf(state) })`.
 */
export function todosOf(state: ToolSessionState): readonly TodoItem[] {
  return (state.get(TODOS) as readonly TodoItem[] | undefined) ?? [];
}

export function setTodos(state: ToolSessionState, todos: readonly TodoItem[]): void {
  state.set(TODOS, Object.freeze([...todos]));
}
