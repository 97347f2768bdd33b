import { lstat } from "node:fs/promises";
import { ConfigurationError, isRecord, isUnforgetError, type ToolDefinition } from "@unforget/core";
import type { MemoryEntry } from "./memory-catalog.ts";
import { createMemoryDir, type MemoryDir, type MemoryDirOptions } from "./memory-dir.ts";
import { MemoryConflictError, MemoryNotFoundError, MemoryPathError } from "./memory-errors.ts";
import { normalizeMemoryName, resolveMemoryPath } from "./memory-name.ts";

/** The virtual root the model sees; `/memories/x.md` is `<root>/x.md`. */
export const MEMORY_TOOL_ROOT = "/memories";
/** Characters of a file `view` returns before it cuts and points at `view_range`. */
export const MEMORY_TOOL_VIEW_MAX_CHARS = 16_000;
/** Files with more lines than this cannot be viewed. */
export const MEMORY_TOOL_MAX_LINES = 999_999;

/** What `execute` resolves to: the `tool_result` content and its `is_error` flag. */
export interface MemoryToolResult {
  content: string;
  isError: boolean;
}

/** The Anthropic tool entry for a request. */
export interface MemoryToolDefinition {
  type: "memory_20250818";
  name: "memory";
}

export interface MemoryTool {
  /** Put this in a request's `tools` for Anthropic models that know the memory tool. */
  readonly definition: MemoryToolDefinition;
  /** The same commands as a plain function tool, for providers without the built-in tool. */
  readonly functionDefinition: ToolDefinition;
  /** Runs one command. Never throws: every bad path, command or argument is an `isError` result. */
  execute(input: unknown): Promise<MemoryToolResult>;
}

export interface MemoryToolOptions extends Partial<MemoryDirOptions> {
  /** A memory dir (or team memory) to work on; otherwise one is opened at `root`. */
  dir?: MemoryDir;
  /** Author recorded on every version the tool writes. Default "memory-tool". */
  author?: string;
}

/** JSON schema of the memory tool's input (for providers that need one). */
export const MEMORY_TOOL_INPUT_SCHEMA: Record<string, unknown> = {
  type: "object",
  properties: {
    command: { type: "string", enum: ["view", "create", "str_replace", "insert", "delete", "rename"] },
    path: { type: "string", description: "A path under /memories, e.g. /memories/notes.md" },
    view_range: { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 2 },
    file_text: { type: "string" },
    old_str: { type: "string" },
    new_str: { type: "string" },
    insert_line: { type: "integer" },
    insert_text: { type: "string" },
    old_path: { type: "string" },
    new_path: { type: "string" },
  },
  required: ["command"],
};

/** `folderOnly`: the path ended in a slash, so only a folder may answer to it. */
type Resolved = { kind: "root" } | { kind: "name"; name: string; folderOnly: boolean };

/** The name of a path that must be a file (a trailing slash names a folder). */
function fileName(target: Resolved, path: string): string | undefined {
  if (target.kind === "root") return undefined;
  if (target.folderOnly) {
    throw new ToolInputError(
      `Error: The path ${path} is not allowed: a path ending in / names a directory, not a file.`,
    );
  }
  return target.name;
}

class ToolInputError extends Error {}

const ok = (content: string): MemoryToolResult => ({ content, isError: false });
const fail = (content: string): MemoryToolResult => ({ content, isError: true });

function stringField(input: Record<string, unknown>, key: string): string {
  const value = input[key];
  if (typeof value !== "string") throw new ToolInputError(`Error: \`${key}\` must be a string.`);
  return value;
}

/** Maps a tool path to a memory name with the memory dir's rules; throws `ToolInputError` saying why not. */
function resolveToolPath(path: string): Resolved {
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

function humanSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}M`;
}

function numbered(lines: string[], first: number): string {
  return lines.map((line, index) => `${String(first + index).padStart(6)}\t${line}`).join("\n");
}

function splitLines(content: string): string[] {
  const lines = content.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines;
}

function isFolderOf(folder: string, entry: MemoryEntry): boolean {
  return folder === "" || entry.name.startsWith(`${folder}/`);
}

/**
 * Anthropic's client-side memory tool (`memory_20250818`) on a memory dir, with the output formats and error
 * strings Anthropic documents. Every path goes through the memory dir's rules (no traversal, encoding,
 * look-alike, backslash, absolute, symlink or NUL escapes), writes are compare-and-swap on what the command
 * read, and a `delete` keeps the last version like any write.
 */
export async function createMemoryTool(options: MemoryToolOptions): Promise<MemoryTool> {
  const author = options.author ?? "memory-tool";
  let dir = options.dir;
  if (!dir) {
    if (!options.root) {
      throw new ConfigurationError(
        "createMemoryTool needs `root` (a folder) or `dir` (an open memory dir).",
        {
          setting: "root",
        },
      );
    }
    dir = await createMemoryDir({ ...options, root: options.root, author });
  }
  const store = dir;

  async function isFolder(name: string): Promise<boolean> {
    try {
      const path = await resolveMemoryPath(store.root, name);
      return (await lstat(path)).isDirectory();
    } catch (error) {
      if (error instanceof ToolInputError || isUnforgetError(error)) throw error;
      return false;
    }
  }

  async function readFile(name: string): Promise<{ content: string; hash: string } | undefined> {
    if (!name.endsWith(".md")) return undefined;
    try {
      return await store.read(name);
    } catch (error) {
      if (error instanceof MemoryNotFoundError) return undefined;
      throw error;
    }
  }

  async function view(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const path = stringField(input, "path");
    const target = resolveToolPath(path);
    const folder = target.kind === "root" ? "" : target.name;
    if (target.kind === "root" || (await isFolder(folder))) {
      if (input.view_range !== undefined)
        return fail("Error: `view_range` is not allowed when `path` is a directory.");
      return ok(await listFolder(path.replace(/\/$/, ""), folder));
    }
    const file = target.folderOnly ? undefined : await readFile(folder);
    if (!file) return fail(`The path ${path} does not exist. Please provide a valid path.`);
    const lines = splitLines(file.content);
    if (lines.length > MEMORY_TOOL_MAX_LINES) {
      return fail(
        `File ${path} exceeds maximum line limit of ${MEMORY_TOOL_MAX_LINES.toLocaleString("en-US")} lines.`,
      );
    }
    let first = 1;
    let last = lines.length;
    if (input.view_range !== undefined) {
      const range = input.view_range;
      if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n))) {
        return fail(
          "Error: `view_range` must be two integers [start_line, end_line] (end_line -1 for the end).",
        );
      }
      const [start, end] = range as [number, number];
      const stop = end === -1 ? lines.length : end;
      if (start < 1 || start > Math.max(1, lines.length) || stop < start || stop > lines.length) {
        return fail(
          `Error: Invalid \`view_range\`: [${start}, ${end}]. Lines run from 1 to ${lines.length}; use [start_line, end_line] with start_line <= end_line, or end_line -1 for the end of the file.`,
        );
      }
      first = start;
      last = stop;
    }
    const header = `Here's the content of ${path} with line numbers:\n`;
    let body = numbered(lines.slice(first - 1, last), first);
    if (body.length > MEMORY_TOOL_VIEW_MAX_CHARS) {
      const cut = body.lastIndexOf("\n", MEMORY_TOOL_VIEW_MAX_CHARS);
      const shown = body.slice(0, cut > 0 ? cut : MEMORY_TOOL_VIEW_MAX_CHARS);
      const shownLines = shown.split("\n").length;
      body = `${shown}\n[Output cut at ${MEMORY_TOOL_VIEW_MAX_CHARS} characters after line ${first + shownLines - 1}; view the rest with view_range [${first + shownLines}, ${last}].]`;
    }
    return ok(header + body);
  }

  async function listFolder(path: string, folder: string): Promise<string> {
    const entries = (await store.list()).filter((entry) => isFolderOf(folder, entry));
    const index = await readFile("MEMORY.md");
    const sizes = new Map<string, number>();
    const depthOf = (name: string) => (folder === "" ? name : name.slice(folder.length + 1)).split("/");
    const all =
      index && folder === ""
        ? [{ name: "MEMORY.md", size: Buffer.byteLength(index.content) }, ...entries]
        : entries;
    let total = 0;
    for (const entry of all) {
      total += entry.size;
      const parts = depthOf(entry.name);
      for (let depth = 1; depth <= Math.min(2, parts.length); depth++) {
        const key = parts.slice(0, depth).join("/");
        sizes.set(key, (sizes.get(key) ?? 0) + entry.size);
      }
    }
    const lines = [`${humanSize(total)}\t${path}`];
    for (const key of [...sizes.keys()].sort())
      lines.push(`${humanSize(sizes.get(key) ?? 0)}\t${path}/${key}`);
    return `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:\n${lines.join("\n")}`;
  }

  async function create(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const path = stringField(input, "path");
    const text = stringField(input, "file_text");
    const target = resolveToolPath(path);
    if (target.kind === "root" || (await isFolder(target.name)))
      return fail(`Error: File ${path} already exists`);
    fileName(target, path);
    if (!target.name.endsWith(".md")) {
      return fail(
        `Error: The path ${path} is not allowed: memory files are markdown and their names end in .md.`,
      );
    }
    try {
      await store.write(target.name, text, { expectedHash: null, author });
    } catch (error) {
      if (error instanceof MemoryConflictError) return fail(`Error: File ${path} already exists`);
      throw error;
    }
    return ok(`File created successfully at: ${path}`);
  }

  async function strReplace(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const path = stringField(input, "path");
    const oldText = stringField(input, "old_str");
    const newText = input.new_str === undefined ? "" : stringField(input, "new_str");
    const target = resolveToolPath(path);
    const name = fileName(target, path);
    const file = name === undefined ? undefined : await readFile(name);
    if (!file || name === undefined)
      return fail(`Error: The path ${path} does not exist. Please provide a valid path.`);
    const occurrences: number[] = [];
    for (
      let at = file.content.indexOf(oldText);
      at !== -1 && oldText !== "";
      at = file.content.indexOf(oldText, at + 1)
    ) {
      occurrences.push(file.content.slice(0, at).split("\n").length);
    }
    if (occurrences.length === 0) {
      return fail(`No replacement was performed, old_str \`${oldText}\` did not appear verbatim in ${path}.`);
    }
    if (occurrences.length > 1) {
      return fail(
        `No replacement was performed. Multiple occurrences of old_str \`${oldText}\` in lines: ${occurrences.join(", ")}. Please ensure it is unique`,
      );
    }
    const at = file.content.indexOf(oldText);
    const next = file.content.slice(0, at) + newText + file.content.slice(at + oldText.length);
    const written = await writeBack(name, path, next, file.hash);
    if (written) return written;
    const editedLine = occurrences[0] ?? 1;
    const lines = splitLines(next);
    const from = Math.max(1, editedLine - 4);
    const to = Math.min(lines.length, editedLine + newText.split("\n").length + 3);
    return ok(`The memory file has been edited.\n${numbered(lines.slice(from - 1, to), from)}`);
  }

  async function insert(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const path = stringField(input, "path");
    const text = stringField(input, "insert_text");
    const line = input.insert_line;
    const name = fileName(resolveToolPath(path), path);
    const file = name === undefined ? undefined : await readFile(name);
    if (!file || name === undefined) return fail(`Error: The path ${path} does not exist`);
    const lines = splitLines(file.content);
    const lineCount = file.content === "" ? 0 : lines.length;
    if (typeof line !== "number" || !Number.isInteger(line) || line < 0 || line > lineCount) {
      return fail(
        `Error: Invalid \`insert_line\` parameter: ${String(line)}. It should be within the range of lines of the file: [0, ${lineCount}]`,
      );
    }
    const kept = file.content === "" ? [] : lines;
    const inserted = text.replace(/\n$/, "").split("\n");
    const next = `${[...kept.slice(0, line), ...inserted, ...kept.slice(line)].join("\n")}\n`;
    const written = await writeBack(name, path, next, file.hash);
    return written ?? ok(`The file ${path} has been edited.`);
  }

  async function writeBack(name: string, path: string, next: string, hash: string) {
    try {
      await store.write(name, next, { expectedHash: hash, author });
      return undefined;
    } catch (error) {
      if (error instanceof MemoryConflictError) {
        return fail(
          `Error: ${path} was changed by someone else while this edit ran; view it again and retry.`,
        );
      }
      throw error;
    }
  }

  async function filesUnder(folder: string): Promise<MemoryEntry[]> {
    return (await store.list()).filter((entry) => entry.name.startsWith(`${folder}/`));
  }

  async function remove(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const path = stringField(input, "path");
    const target = resolveToolPath(path);
    if (target.kind === "root")
      return fail(`Error: The ${MEMORY_TOOL_ROOT} directory itself cannot be deleted.`);
    if (await isFolder(target.name)) {
      for (const entry of await filesUnder(target.name))
        await store.delete(entry.name, { expectedHash: entry.hash, author });
      return ok(`Successfully deleted ${path}`);
    }
    if (target.folderOnly || !(await readFile(target.name)))
      return fail(`Error: The path ${path} does not exist`);
    await store.delete(target.name, { author });
    return ok(`Successfully deleted ${path}`);
  }

  async function rename(input: Record<string, unknown>): Promise<MemoryToolResult> {
    const oldPath = stringField(input, "old_path");
    const newPath = stringField(input, "new_path");
    const source = resolveToolPath(oldPath);
    const target = resolveToolPath(newPath);
    if (source.kind === "root")
      return fail(`Error: The ${MEMORY_TOOL_ROOT} directory itself cannot be renamed.`);
    if (target.kind === "root" || (await isFolder(target.name)) || (await readFile(target.name))) {
      return fail(`Error: The destination ${newPath} already exists`);
    }
    if (await isFolder(source.name)) {
      for (const entry of await filesUnder(source.name)) {
        await store.rename(entry.name, `${target.name}${entry.name.slice(source.name.length)}`, {
          expectedHash: entry.hash,
          author,
        });
      }
      return ok(`Successfully renamed ${oldPath} to ${newPath}`);
    }
    if (source.folderOnly || !(await readFile(source.name)))
      return fail(`Error: The path ${oldPath} does not exist`);
    fileName(target, newPath);
    if (!target.name.endsWith(".md")) {
      return fail(
        `Error: The path ${newPath} is not allowed: memory files are markdown and their names end in .md.`,
      );
    }
    try {
      await store.rename(source.name, target.name, { author });
    } catch (error) {
      if (error instanceof MemoryConflictError)
        return fail(`Error: The destination ${newPath} already exists`);
      throw error;
    }
    return ok(`Successfully renamed ${oldPath} to ${newPath}`);
  }

  const commands: Record<string, (input: Record<string, unknown>) => Promise<MemoryToolResult>> = {
    view,
    create,
    str_replace: strReplace,
    insert,
    delete: remove,
    rename,
  };

  return {
    definition: { type: "memory_20250818", name: "memory" },
    functionDefinition: {
      name: "memory",
      description:
        "Store and read memory files under /memories: view (a directory or a file with line numbers), create, str_replace, insert, delete, rename.",
      inputSchema: MEMORY_TOOL_INPUT_SCHEMA,
    },
    async execute(input) {
      try {
        if (!isRecord(input)) return fail("Error: The memory tool input must be an object with a `command`.");
        const command = input.command;
        const run =
          typeof command === "string" && Object.hasOwn(commands, command) ? commands[command] : undefined;
        if (!run) {
          return fail(
            `Error: Unknown command ${JSON.stringify(command)}; use one of ${Object.keys(commands).join(", ")}.`,
          );
        }
        return await run(input);
      } catch (error) {
        if (error instanceof ToolInputError) return fail(error.message);
        const message = error instanceof Error ? error.message : String(error);
        return fail(message.startsWith("Error:") ? message : `Error: ${message}`);
      }
    },
  };
}
