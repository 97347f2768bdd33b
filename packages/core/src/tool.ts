import type { ImageBlock, TextBlock } from "./message.ts";

/** What one tool call returns; the session turns it into the tool_result the model reads. */
export interface ToolOutput {
  /** Text, or text and image blocks (e.g. an image file that was read). */
  content: string | (TextBlock | ImageBlock)[];
  /** True when the call failed; `content` then says what went wrong and what to do instead. */
  isError: boolean;
}

/** A tool's output as the text a host that takes only text passes on (an image is named, not inlined). */
export function toolOutputText(output: ToolOutput): string {
  if (typeof output.content === "string") return output.content;
  return output.content.map((block) => (block.type === "text" ? block.text : "[image]")).join("\n");
}

/**
 * State a session keeps for its tools across calls, turns and compactions (the files read and when, the todo
 * list, …). Each package owns its keys (symbols) and reads and writes its entries through its own accessors.
 */
export type ToolSessionState = Map<symbol, unknown>;

/** What the session hands a tool for one call. */
export interface ToolContext {
  /** Aborted when the user cancels the turn or the call's timeout passes: stop promptly and resolve. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  /** The id of the tool_use this call answers. */
  readonly toolUseId: string;
  /** The session's working directory (absolute); relative paths in the input resolve against it. */
  readonly cwd: string;
  /** The session's state for its tools (see `ToolSessionState`). */
  readonly sessionState: ToolSessionState;
}

/**
 * What a permission rule for a tool matches against, read from one call's input: a shell command (rules like
 * `Bash(npm test:*)`), a path read or written (`Read(./src/**)`, `Edit(docs/**)`) or a URL
 * (`WebFetch(domain:example.com)`).
 */
export type ToolPermissionSubject =
  | { kind: "command"; command: string }
  | { kind: "path"; path: string; access: "read" | "write" }
  | { kind: "url"; url: string };

/**
 * What compaction may do with a tool's old results when the context must shrink:
 * - "reproducible": what the result said can be had again — the call made again (a read, a search, a listing) or
 *   what it reports read back (an edit's confirmation, whose file is on disk). Old results are cleared or folded
 *   into one-line records.
 * - "persist": it cannot (a command's output, a query of live data, an MCP tool): an old result is first saved to
 *   the session folder and its record points there, so the model can read it back; without a folder it stays.
 * - "keep": never cleared or folded (the memory tool: what the model chose to recall is what it works from).
 */
export type ToolResultRetention = "reproducible" | "persist" | "keep";

/**
 * A tool the model can call: its definition for the request, what it may run alongside, and what running it
 * does. Built-in tools, memory, tasks, compact's tools and MCP tools all take this shape.
 */
export interface Tool {
  /** The name the model calls (unique within a session). */
  readonly name: string;
  /** What the tool does and when to use it, for the model. */
  readonly description: string;
  /** JSON Schema (an object schema) of the input; the session validates each call's input against it before `execute`. */
  readonly inputSchema: Record<string, unknown>;
  /** True when a call never changes anything outside the session (no file, process or network write): allowed in plan mode. */
  readonly readOnly?: boolean;
  /** True when calls may run at the same time as the turn's other concurrency-safe calls; otherwise calls run one at a time, in order. */
  readonly concurrencySafe?: boolean;
  /** What compaction may do with this tool's old results (see `ToolResultRetention`); default "persist". */
  readonly resultRetention?: ToolResultRetention;
  /** Most milliseconds one call may take before its signal aborts (the session's default otherwise). */
  readonly timeoutMs?: number;
  /** Called before permission rules are checked: what a rule for this tool matches in this input (none: rules match the tool name only). */
  permissionSubject?(
    input: Record<string, unknown>,
    context: Pick<ToolContext, "cwd">,
  ): ToolPermissionSubject | undefined;
  /**
   * Called with input that passed the schema. Resolves with an error result for anything the model can act on
   * (a missing file, a non-unique edit); a rejection is reported to the model as an error result too, and never
   * stops the loop.
   */
  execute(input: Record<string, unknown>, context: ToolContext): Promise<ToolOutput>;
}
