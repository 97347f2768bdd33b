import type { ToolOutput } from "@unforget/core";
import type { MemoryEntry } from "../store/memory-catalog.ts";
import { MemoryNotFoundError, MemoryPathError } from "../store/memory-errors.ts";
import { normalizeMemoryName } from "../store/memory-name.ts";
import type { MemoryStore } from "../store/memory-store.ts";

/** The virtual root the model sees; `/memories/x.md` is `<root>/x.md`. */
export const MEMORY_TOOL_ROOT = "/memories";

/** What every command works on. */
export interface ToolContext {
  store: MemoryStore;
  /** Recorded on every version the tool writes. */
  author: string;
}

/** `folderOnly`: the path ended in a slash, so only a folder may answer to it. */
export type Resolved = { kind: "root" } | { kind: "name"; name: string; folderOnly: boolean };

/** The name of a path that must be a file (a trailing slash names a folder). */
export function fileName(target: Resolved, path: string): string | undefined {
  if (target.kind === "root") return undefined;
  if (target.folderOnly) {
    throw new ToolInputError(
      `Error: The path ${path} is not allowed: a path ending in / names a directory, not a file.`,
    );
  }
  return target.name;
}

/** Bad input to a command: its message is the error result. Never leaves the tool. */
export class ToolInputError extends Error {}

/** What every command resolves to: a `ToolOutput` whose content is text. */
export type TextOutput = ToolOutput & { content: string };

export const ok = (content: string): TextOutput => ({ content, isError: false });
export const fail = (content: string): TextOutput => ({ content, isError: true });

export function stringField(input: Record<string, unknown>, key: string): string {
  const value = input[key];
  if (typeof value !== "string") throw new ToolInputError(`Error: \`${key}\` must be a string.`);
  return value;
}

/** Maps a tool path to a memory name with the memory dir's rules; throws `ToolInputError` saying why not. */
export function resolveToolPath(path: string): Resolved {
  if (path === MEMORY_TOOL_ROOT || path === `${MEMORY_TOOL_ROOT}/`) return { kind: "root" };
  if (!path.startsWith(`${MEMORY_TOOL_ROOT}/`)) {
    throw new ToolInputError(
      `Error: The path ${path} is not allowed: every path must start with ${MEMORY_TOOL_ROOT}/.`,
    );
  }
  let relative = path.slice(MEMORY_TOOL_ROOT.length + 1);
  const folderOnly = relative.endsWith("/");
  if (folderOnly) relative = relative.slice(0, -1);
  try {
    return { kind: "name", name: normalizeMemoryName(relative, { allowFolder: true }), folderOnly };
  } catch (error) {
    if (!(error instanceof MemoryPathError)) throw error;
    throw new ToolInputError(`Error: The path ${path} is not allowed (${error.rule}): ${error.reason}.`);
  }
}

export function humanSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}M`;
}

export function numbered(lines: string[], first: number): string {
  return lines.map((line, index) => `${String(first + index).padStart(6)}\t${line}`).join("\n");
}

export function splitLines(content: string): string[] {
  const lines = content.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines;
}

export function isFolderOf(folder: string, entry: MemoryEntry): boolean {
  return folder === "" || entry.name.startsWith(`${folder}/`);
}

/** Whether `name` is a folder: some memory's name lies under it (any store; folders exist through their files). */
export async function isFolder(context: ToolContext, name: string): Promise<boolean> {
  const prefix = `${name}/`;
  return (await context.store.list()).some((entry) => entry.name.startsWith(prefix));
}

/** A memory file's content and hash; `undefined` for a missing file or a name that is not a memory file. */
export async function readToolFile(
  context: ToolContext,
  name: string,
): Promise<{ content: string; hash: string } | undefined> {
  if (!name.endsWith(".md")) return undefined;
  try {
    return await context.store.read(name);
  } catch (error) {
    if (error instanceof MemoryNotFoundError) return undefined;
    throw error;
  }
}
