import type { ToolSessionState } from "@unforget/core";

const DIRECTORIES = Symbol("@unforget/tools/directories");

/**
 * Lets the file tools (and Bash's `cd`) use more folders in this session, besides the cwd and the folders the
 * tools were created with: call it when the user grants a folder during the session (a permission answer's
 * `addDirectories`). Paths are absolute; granting one twice is harmless.
 */
export function allowDirectories(state: ToolSessionState, directories: readonly string[]): void {
  const granted = new Set(directoriesOf(state));
  for (const directory of directories) granted.add(directory);
  state.set(DIRECTORIES, Object.freeze([...granted]));
}

/** The folders granted with `allowDirectories` in this session. */
export function directoriesOf(state: ToolSessionState): readonly string[] {
  return (state.get(DIRECTORIES) as readonly string[] | undefined) ?? [];
}
