/**
 * Tools whose results can be cleared without losing anything that cannot be had again: reads, searches,
 * listings, shell output, web fetches and the confirmations of edits and writes. The names of the common
 * agents (Claude Code, SWE-agent, OpenHands, Codex, the Anthropic tools) are covered; matching ignores case,
 * `-` and `_`. Results of other tools (questions to the user, task management, MCP tools) are never cleared:
 * their content may not be reproducible.
 */
export const DEFAULT_COMPACTABLE_TOOLS: readonly string[] = Object.freeze([
  "Read",
  "Bash",
  "Grep",
  "Glob",
  "LS",
  "WebFetch",
  "WebSearch",
  "Edit",
  "MultiEdit",
  "Write",
  "NotebookRead",
  "read_file",
  "write_file",
  "edit_file",
  "create_file",
  "view",
  "cat",
  "shell",
  "execute_bash",
  "execute_command",
  "run_terminal_cmd",
  "exec_command",
  "local_shell",
  "grep",
  "glob",
  "find",
  "find_file",
  "search_file",
  "search_dir",
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "create",
  "edit",
  "str_replace_editor",
  "str_replace_based_edit_tool",
  "apply_patch",
  "list_files",
  "list_dir",
  "ls",
  "web_fetch",
  "fetch",
  "web_search",
  "browser",
]);

/** Which tools' results a layer may clear: a list of names (case and `-`/`_` ignored) or a predicate. */
export type CompactableTools = readonly string[] | ((toolName: string) => boolean);

const normalize = (name: string) => name.toLowerCase().replace(/[-_]/g, "");

/** A predicate for a compactable-tools setting (the default list when none is given). */
export function compactablePredicate(
  tools: CompactableTools = DEFAULT_COMPACTABLE_TOOLS,
): (name: string) => boolean {
  if (typeof tools === "function") return tools;
  const names = new Set(tools.map(normalize));
  return (name) => names.has(normalize(name));
}
