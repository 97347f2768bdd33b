/** The names the models know for the built-in tools: Claude Code's (decision 0014). */
export const BUILTIN_TOOL_NAMES = {
  read: "Read",
  write: "Write",
  edit: "Edit",
  bash: "Bash",
  glob: "Glob",
  grep: "Grep",
  todoWrite: "TodoWrite",
} as const;
