import type { SessionMemorySource, Tool, UnforgetError } from "@unforget/core";

// What the session asks of memory, background tasks and MCP servers, declared here so that the session installs,
// type-checks and runs without `@unforget/memory`, `@unforget/tasks` or `@unforget/mcp`: the objects those
// packages make satisfy these interfaces as they are (docs/decisions/0036-session-without-memory-mcp-tasks.md).

/** A background sub-agent, started by the Agent tool as a `local_agent` task. */
export interface SessionLocalAgentTask {
  type: "local_agent";
  description: string;
  prompt: string;
  /** Runs the sub-agent to its end; its report is the task's result. */
  run(job: { signal: AbortSignal; output: { line(text: string): Promise<void> } }): Promise<string>;
}

/** A background task reported something (`TaskNotification` of `@unforget/tasks`); the model reads it next. */
export interface SessionTaskNotification {
  /** `finished`, `failed`, `stalled`, `deadline`, `message` or `no_worker`. */
  kind: string;
  taskId: string;
  /** The task's type (`local_bash`, `local_agent`, …). */
  type: string;
  description: string;
  /** Epoch milliseconds when it was raised. */
  at: number;
}

/**
 * A background task manager: `createTaskManager` of `@unforget/tasks` (which the session loads on first use for
 * the follow-up tools, the notifications attachment and the task status after a compaction).
 */
export interface SessionTaskManager {
  /** Called by the Agent tool to run a sub-agent in the background; resolves with the task's id. */
  start(spec: SessionLocalAgentTask): Promise<string>;
  /** Called before each model call: the notifications raised since the last call, oldest first, cleared. */
  takeNotifications(): Promise<SessionTaskNotification[]>;
  /** Called after a compaction or a resume, for the status of every task. */
  list(): Promise<readonly unknown[]>;
  /** Called by `task_output`: the output from a byte offset. */
  readOutput(id: string, offset?: number): Promise<unknown>;
  /** Called by `task_input`: input for a task's stdin or mailbox. */
  write(id: string, input: string): Promise<void>;
  /** Called by `task_stop`: ends a task. */
  stop(id: string): Promise<unknown>;
}

/** Long-term memory: a memory dir, team memory or a networked store (`MemoryStore` of `@unforget/memory`). */
export interface SessionMemoryStore {
  /** A label for messages and reports. */
  readonly location: string;
  /** Called at session start for the MEMORY.md index. */
  loadIndex(): Promise<unknown>;
  /** Called on each prompt to recall memories. */
  search(query: string): Promise<readonly unknown[]>;
  /** Called when a recalled memory is read in full. */
  read(name: string): Promise<unknown>;
}

/** Where extraction queues proposed changes for the user (`ProposalQueue` of `@unforget/memory`). */
export interface SessionProposalQueue {
  /** Called by extraction in "propose" consent. */
  propose(proposal: object): Promise<unknown>;
  /** Pending proposals, oldest first. */
  list(): Promise<readonly unknown[]>;
}

/** Counts ended sessions for the dream gates (`DreamJob` of `@unforget/memory`). */
export interface SessionDreamJob {
  readonly name: string;
  /** Called when a session ends. */
  recordSession(sessionId: string): Promise<void>;
}

/** Session notes kept in the background, which compaction reads (`SessionMemory` of `@unforget/memory`). */
export interface SessionNotes extends SessionMemorySource {
  /** The notes file. */
  readonly notesPath: string;
  /** Called after each model response; starts an update in the background when its trigger fires. */
  observe(turn: { contextTokens: number; toolCalls: number }): boolean;
}

/** A stdio MCP server (an `.mcp.json` entry as `readMcpConfig` of `@unforget/mcp` returns it). */
export interface SessionMcpStdioServerConfig {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** An MCP server over streamable HTTP. */
export interface SessionMcpHttpServerConfig {
  type: "http";
  url: string;
  headers: Record<string, string>;
}

export type SessionMcpServerConfig = SessionMcpStdioServerConfig | SessionMcpHttpServerConfig;

/** Why an MCP server was dropped or warned about (`McpServerError` of `@unforget/mcp`). */
export interface SessionMcpServerError extends UnforgetError {
  readonly server: string;
  readonly kind: string;
  /** The message without the server's stderr, for a one-line report. */
  readonly summary: string;
  /** The end of what a stdio server wrote on stderr, when it wrote anything. */
  readonly stderr: string | undefined;
}

/** Where one MCP server stands (`McpServerStatus` of `@unforget/mcp`). */
export interface SessionMcpServerStatus {
  server: string;
  transport: "stdio" | "http";
  state: "connecting" | "connected" | "failed" | "closed";
  /** The names the model calls (empty unless connected). */
  tools: string[];
  instructions?: string;
  /** Why the server was dropped, when `state` is `failed`. */
  error?: SessionMcpServerError;
}

/** What happens to MCP servers, as it happens (`McpServerEvent` of `@unforget/mcp`). */
export type SessionMcpServerEvent =
  | { type: "mcp-server-connected"; server: string; tools: string[] }
  | { type: "mcp-server-tools-changed"; server: string; tools: string[] }
  | { type: "mcp-server-failed"; server: string; error: SessionMcpServerError }
  | { type: "mcp-server-warning"; server: string; error: SessionMcpServerError };

/** Connected MCP servers (`McpServers` of `@unforget/mcp`, e.g. from `connectMcpServers`). */
export interface SessionMcpServers {
  /** Awaited before the first turn; resolves once every server is connected or failed, never rejects. */
  ready(): Promise<SessionMcpServerStatus[]>;
  /** Called before each model call: the tools of the servers connected now. */
  tools(): Tool[];
  /** Every server's state now. */
  status(): SessionMcpServerStatus[];
  /** Stops one server and connects it again from its config. */
  reconnect(server: string): Promise<SessionMcpServerStatus>;
  /** Called when a session that connected the servers closes; idempotent. */
  close(): Promise<void>;
}
