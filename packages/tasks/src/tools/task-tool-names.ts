/** The tool names the agent sees (and the notifications and status text refer to). */
export const TASK_TOOL_NAMES = {
  start: "task_start",
  output: "task_output",
  input: "task_input",
  stop: "task_stop",
  list: "task_list",
} as const;
