import type { ToolResultRetention } from "@unforget/core";

/**
 * Tool names taken as reproducible when nothing else says what a tool is (a replayed or imported session, a
 * host that declares nothing): reads, searches, listings, shell output, web fetches and the confirmations of
 * edits and writes, as the common agents name them (Claude Code, SWE-agent, OpenHands, Codex, the Anthropic
 * tools); matching ignores case, `-` and `_`. Any other undeclared tool counts as not reproducible: its old
 * results are saved to the session folder before they are cleared, and kept where there is no folder.
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

/** Tools taken as reproducible: a list of names (case and `-`/`_` ignored) or a predicate. */
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

/**
 * What the session says its tools' old results may become (core's `Tool.resultRetention`), by tool name: a
 * table, or a function that answers undefined for a tool it does not know.
 */
export type ResultRetentionSetting =
  | Readonly<Record<string, ToolResultRetention>>
  | ((toolName: string) => ToolResultRetention | undefined);

/** A setting's answer for one tool, when it has one. */
function answerOf(
  setting: ResultRetentionSetting | undefined,
  name: string,
): ToolResultRetention | undefined {
  if (setting === undefined) return undefined;
  if (typeof setting === "function") return setting(name);
  return Object.hasOwn(setting, name) ? setting[name] : undefined;
}

/**
 * The settings in order as one: for each tool, the first that answers (a user's table before what the host's
 * tool definitions say, for instance); undefined when none is given.
 */
export function firstRetention(
  ...settings: readonly (ResultRetentionSetting | undefined)[]
): ResultRetentionSetting | undefined {
  const given = settings.filter((setting) => setting !== undefined);
  if (given.length <= 1) return given[0];
  return (name) => {
    for (const setting of given) {
      const answer = answerOf(setting, name);
      if (answer !== undefined) return answer;
    }
    return undefined;
  };
}

/** How the cheap layers look a tool's retention up. */
export type RetentionLookup = (toolName: string) => ToolResultRetention;

const isDefaultReproducible = compactablePredicate();

/**
 * The retention of every tool name: the setting's answer, else "reproducible" for the well-known names of
 * `DEFAULT_COMPACTABLE_TOOLS`, else "persist".
 */
export function retentionLookup(setting?: ResultRetentionSetting): RetentionLookup {
  return (name) => answerOf(setting, name) ?? (isDefaultReproducible(name) ? "reproducible" : "persist");
}

/**
 * A layer's `compactableTools` over the retention: the tools it names are reproducible, the others are not
 * (their results are saved before they are cleared; a tool that is kept stays kept).
 */
export function withCompactableTools(
  retention: RetentionLookup,
  override: CompactableTools | undefined,
): RetentionLookup {
  if (override === undefined) return retention;
  const listed = compactablePredicate(override);
  return (name) => (listed(name) ? "reproducible" : retention(name) === "keep" ? "keep" : "persist");
}

/**
 * Whether a layer may clear or fold a tool's results: reproducible ones always, the others only when they can
 * be saved first (there is a session folder); kept ones never.
 */
export function clearablePredicate(
  retention: RetentionLookup,
  sessionDir: string | undefined,
): (toolName: string) => boolean {
  return (name) => {
    const kind = retention(name);
    return kind === "reproducible" || (kind === "persist" && sessionDir !== undefined);
  };
}
