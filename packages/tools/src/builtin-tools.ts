import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@unforget/core";
import { type BashToolOptions, createBashTool } from "./bash/bash-tool.ts";
import { createEditTool } from "./files/edit-tool.ts";
import { createReadTool, type ReadToolOptions } from "./files/read-tool.ts";
import { createWriteTool, type WriteToolOptions } from "./files/write-tool.ts";
import type { FileAccessOptions } from "./paths/file-access.ts";
import { createGlobTool, type SearchToolOptions } from "./search/glob-tool.ts";
import { createGrepTool, type GrepToolOptions } from "./search/grep-tool.ts";
import { createTodoWriteTool } from "./todo/todo-write-tool.ts";

type Own<T> = Omit<T, keyof FileAccessOptions>;

/** Options of `createBuiltinTools`: the folders every tool shares, then each tool's own. */
export interface BuiltinToolsOptions extends FileAccessOptions {
  read?: Own<ReadToolOptions>;
  /** Write's and Edit's options. */
  write?: Own<WriteToolOptions>;
  bash?: Omit<BashToolOptions, "additionalDirectories">;
  glob?: Own<SearchToolOptions>;
  grep?: Own<GrepToolOptions>;
}

/**
 * Read, Write, Edit, Bash, Glob, Grep and TodoWrite, sharing the folders they may use. Bash's output folder
 * is readable by the file tools, so the model can read the whole of an output that was cut. Filter the list
 * by `name` to leave tools out.
 */
export function createBuiltinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const outputDir = options.bash?.outputDir ?? join(tmpdir(), `unforget-bash-${randomUUID()}`);
  const access: FileAccessOptions = {
    additionalDirectories: options.additionalDirectories ?? [],
    readOnlyDirectories: [...(options.readOnlyDirectories ?? []), outputDir],
  };
  return [
    createReadTool({ ...options.read, ...access }),
    createWriteTool({ ...options.write, ...access }),
    createEditTool({ ...options.write, ...access }),
    createBashTool({ ...options.bash, outputDir, additionalDirectories: access.additionalDirectories ?? [] }),
    createGlobTool({ ...options.glob, ...access }),
    createGrepTool({ ...options.grep, ...access }),
    createTodoWriteTool(),
  ];
}
