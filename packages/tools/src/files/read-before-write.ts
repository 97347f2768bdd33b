import type { ToolSessionState } from "@unforget/core";
import { ToolCallError } from "../tool-errors.ts";
import { fileReadEntry, hashBytes } from "./read-state.ts";

/**
 * Throws unless the model read the file at `path` in this session and it has not changed on disk since: the
 * same modification time and size, or, when only the time moved (a `touch`, a checkout of the same content),
 * the same bytes as the last whole read. So a write never replaces content the model has not seen.
 */
export function checkUnchangedSinceRead(
  state: ToolSessionState,
  path: string,
  current: { mtimeNs: bigint; size: number; bytes: Uint8Array },
  shownPath: string,
  verb: "write" | "edit",
): void {
  const entry = fileReadEntry(state, path);
  if (entry === undefined) {
    throw new ToolCallError(
      `${shownPath} has not been read in this session. Read it first, then ${verb} it: the tools only change files whose current content you have seen.`,
    );
  }
  if (entry.mtimeNs === current.mtimeNs && entry.size === current.size) return;
  if (entry.hash !== undefined && entry.hash === hashBytes(current.bytes)) return;
  throw new ToolCallError(
    `${shownPath} has changed on disk since you read it (by the user, a formatter or a command). Read it again and make your change on its current content.`,
  );
}
