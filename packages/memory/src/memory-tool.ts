import { ConfigurationError, type ToolDefinition } from "@unforget/core";
import { isRecord } from "./is-record.ts";
import { createMemoryDir, type MemoryDir, type MemoryDirOptions } from "./memory-dir.ts";
import {
  createCommand,
  deleteCommand,
  insertCommand,
  renameCommand,
  strReplaceCommand,
} from "./memory-tool-edit.ts";
import { fail, type MemoryToolResult, type ToolContext, ToolInputError } from "./memory-tool-paths.ts";
import { viewCommand } from "./memory-tool-view.ts";

export { MEMORY_TOOL_ROOT, type MemoryToolResult } from "./memory-tool-paths.ts";

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
  const context: ToolContext = { store: dir, author };

  const commands: Record<
    string,
    (context: ToolContext, input: Record<string, unknown>) => Promise<MemoryToolResult>
  > = {
    view: viewCommand,
    create: createCommand,
    str_replace: strReplaceCommand,
    insert: insertCommand,
    delete: deleteCommand,
    rename: renameCommand,
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
        return await run(context, input);
      } catch (error) {
        if (error instanceof ToolInputError) return fail(error.message);
        const message = error instanceof Error ? error.message : String(error);
        return fail(message.startsWith("Error:") ? message : `Error: ${message}`);
      }
    },
  };
}
