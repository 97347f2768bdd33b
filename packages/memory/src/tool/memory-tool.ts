import type { Tool, ToolOutput } from "@unforget/core";
import { isRecord } from "../store/is-record.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import {
  createCommand,
  deleteCommand,
  insertCommand,
  renameCommand,
  strReplaceCommand,
} from "./memory-tool-edit.ts";
import { fail, type TextOutput, type ToolContext, ToolInputError } from "./memory-tool-paths.ts";
import { viewCommand } from "./memory-tool-view.ts";

export { MEMORY_TOOL_ROOT } from "./memory-tool-paths.ts";

/** Anthropic's entry for its built-in client-side memory tool, as it goes into a request's `tools`. */
export interface MemoryToolDefinition {
  type: "memory_20250818";
  name: "memory";
}

/** The memory tool in core's `Tool` contract, plus the entry for Anthropic's built-in memory tool. */
export interface MemoryTool extends Tool {
  /**
   * Put this in an Anthropic request's `tools` (instead of the function definition) for models that know
   * `memory_20250818`; their calls come to `execute` all the same.
   */
  readonly anthropicDefinition: MemoryToolDefinition;
  /**
   * Runs one command (the session's context is not needed and may be left out). Never rejects: every bad
   * path, command or argument is an `isError` result; the content is always text.
   */
  execute(input: Record<string, unknown>, context?: unknown): Promise<ToolOutput & { content: string }>;
}

export interface MemoryToolOptions {
  /** Where the memories are: a memory dir, team memory, or any other `MemoryStore` (a database). */
  store: MemoryStore;
  /** Recorded as the author of every version the tool writes (never taken from the tool's input). Default "memory-tool". */
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
 * Anthropic's client-side memory tool (`memory_20250818`) on any memory store, with the output formats and
 * error strings Anthropic documents, as a `Tool` of core's contract. Every path goes through the memory
 * names' rules (no traversal, encoding, look-alike, backslash, absolute, symlink or NUL escapes), writes are
 * compare-and-swap on what the command read, and a `delete` keeps the last version like any write.
 */
export function createMemoryTool(options: MemoryToolOptions): MemoryTool {
  const context: ToolContext = { store: options.store, author: options.author ?? "memory-tool" };

  const commands: Record<
    string,
    (context: ToolContext, input: Record<string, unknown>) => Promise<TextOutput>
  > = {
    view: viewCommand,
    create: createCommand,
    str_replace: strReplaceCommand,
    insert: insertCommand,
    delete: deleteCommand,
    rename: renameCommand,
  };

  return {
    name: "memory",
    description:
      "Store and read memory files under /memories: view (a directory or a file with line numbers), create, str_replace, insert, delete, rename.",
    inputSchema: MEMORY_TOOL_INPUT_SCHEMA,
    readOnly: false,
    // What the model chose to recall is what it works from: compaction never clears or folds these results.
    resultRetention: "keep",
    // Commands read and then write conditioned on what they read: one at a time keeps a turn's edits in order.
    concurrencySafe: false,
    anthropicDefinition: { type: "memory_20250818", name: "memory" },
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
