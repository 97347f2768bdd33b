import type {
  Tool,
  ToolContext,
  ToolOutput,
  ToolPermissionSubject,
  ToolResultRetention,
} from "@unforget/core";
import { UnsafePathError } from "@unforget/files";
import { ToolCallError } from "./tool-errors.ts";

/** What a built-in tool declares; `run` resolves with the result content, or throws `ToolCallError`. */
export interface BuiltinToolInit {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  /** What compaction may do with old results (core's `ToolResultRetention`): every built-in tool says. */
  resultRetention: ToolResultRetention;
  concurrencySafe: boolean;
  timeoutMs?: number;
  permissionSubject?(
    input: Record<string, unknown>,
    context: Pick<ToolContext, "cwd">,
  ): ToolPermissionSubject | undefined;
  run(input: Record<string, unknown>, context: ToolContext): Promise<ToolOutput["content"] | ToolOutput>;
}

const FILE_SYSTEM_REASONS: Record<string, string> = {
  ENOENT: "it does not exist",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
  EISDIR: "it is a directory",
  ENOTDIR: "a component of the path is not a directory",
  ENOSPC: "the disk is full",
  EROFS: "the file system is read-only",
  ENAMETOOLONG: "the name is too long",
  EMFILE: "too many files are open; try again",
  EBUSY: "the file is busy; try again",
};

/**
 * A file-system failure as a sentence for the model (`Could not open /x: permission denied.`), or undefined
 * for anything that is not one.
 */
function fileSystemFailure(error: unknown): string | undefined {
  const failure = error as { code?: unknown; syscall?: unknown; path?: unknown } | null;
  if (typeof failure?.code !== "string" || typeof failure.syscall !== "string") return undefined;
  const reason = FILE_SYSTEM_REASONS[failure.code] ?? `the system reported ${failure.code}`;
  const target = typeof failure.path === "string" ? ` ${failure.path}` : "";
  return `Could not ${failure.syscall}${target}: ${reason}.`;
}

/**
 * A built-in tool in core's contract. A `ToolCallError`, a refused path or a file-system failure becomes an
 * error result the model reads; anything else rejects, and the session reports it as an error result too.
 */
export function defineBuiltinTool(init: BuiltinToolInit): Tool {
  const tool: Tool = {
    name: init.name,
    description: init.description,
    inputSchema: init.inputSchema,
    readOnly: init.readOnly,
    resultRetention: init.resultRetention,
    concurrencySafe: init.concurrencySafe,
    ...(init.timeoutMs === undefined ? {} : { timeoutMs: init.timeoutMs }),
    ...(init.permissionSubject === undefined ? {} : { permissionSubject: init.permissionSubject }),
    async execute(input, context) {
      try {
        const result = await init.run(input ?? {}, context);
        return typeof result === "string" || Array.isArray(result)
          ? { content: result, isError: false }
          : result;
      } catch (error) {
        if (error instanceof ToolCallError || error instanceof UnsafePathError) {
          return { content: error.message, isError: true };
        }
        const failure = fileSystemFailure(error);
        if (failure !== undefined) return { content: failure, isError: true };
        throw error;
      }
    },
  };
  return Object.freeze(tool);
}
