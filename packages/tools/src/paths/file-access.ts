import { resolve } from "node:path";
import type { ToolContext, ToolPermissionSubject } from "@unforget/core";
import { confinePath, isPathInside, UnsafePathError } from "@unforget/files";
import { directoriesOf } from "./session-directories.ts";

/** Where the file tools may go: the session's working directory plus these folders. */
export interface FileAccessOptions {
  /** Folders besides the session's cwd that the tools may read and write (absolute, or relative to the cwd). */
  additionalDirectories?: readonly string[];
  /**
   * Folders the tools may read and search but never write (absolute, or relative to the cwd): the session's
   * persisted tool outputs, Bash's kept outputs, a reference checkout. They win over a writable folder that
   * contains them.
   */
  readOnlyDirectories?: readonly string[];
}

/**
 * The real path of `path` for a read or a write, confined to the cwd and the configured folders (symlinks
 * followed, the last component included); throws `UnsafePathError` saying where the path may go instead.
 */
export async function resolveToolPath(
  path: string,
  context: Pick<ToolContext, "cwd" | "sessionState">,
  options: FileAccessOptions,
  access: "read" | "write",
): Promise<string> {
  const writable = writableRoots(context, options);
  const readOnly = (options.readOnlyDirectories ?? []).map((root) => resolve(context.cwd, root));
  const roots = access === "read" ? [...writable, ...readOnly] : writable;
  const confined = await confinePath(path, { base: context.cwd, roots });
  if (access === "write") {
    for (const root of readOnly) {
      const real = await confinePath(root, { base: context.cwd, roots: [root] }).catch(() => undefined);
      if (real !== undefined && isPathInside(real.path, confined.path)) {
        throw new UnsafePathError(
          `The path ${JSON.stringify(path)} is in ${JSON.stringify(root)}, which this session may read but not change. Write somewhere else in the working directory.`,
          { path, rule: "outside" },
        );
      }
    }
  }
  return confined.path;
}

/** The folders a session may write in: its cwd, the tools' `additionalDirectories`, and those granted since. */
export function writableRoots(
  context: Pick<ToolContext, "cwd" | "sessionState">,
  options: Pick<FileAccessOptions, "additionalDirectories">,
): string[] {
  return [context.cwd, ...(options.additionalDirectories ?? []), ...directoriesOf(context.sessionState)].map(
    (root) => resolve(context.cwd, root),
  );
}

/** What permission rules match for a file tool: the path as the model wrote it, resolved against the cwd. */
export function pathSubject(
  path: unknown,
  context: Pick<ToolContext, "cwd">,
  access: "read" | "write",
): ToolPermissionSubject | undefined {
  if (typeof path !== "string") return undefined;
  return { kind: "path", path: resolve(context.cwd, path), access };
}

/** How a path is shown to the model: relative to the cwd when inside it (fewer tokens), absolute otherwise. */
export function displayPath(path: string, cwd: string): string {
  if (!isPathInside(cwd, path)) return path;
  const inside = path.slice(cwd.length).replace(/^[/\\]/, "");
  return inside === "" ? "." : inside;
}

/** The `file_path` property of a file tool's input schema; `what` completes "The file to …". */
export function filePathProperty(what: string): Record<string, unknown> {
  return {
    type: "string",
    description: `The file to ${what}: absolute, or relative to the working directory.`,
  };
}
