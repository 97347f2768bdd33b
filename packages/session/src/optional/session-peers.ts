import type { Tool } from "@unforget/core";
import type { McpServerConfig } from "@unforget/mcp";
import type { TaskManager } from "@unforget/tasks";
import type { AgentSessionOptions, ChildSessionLink } from "../loop/agent-session-options.ts";
import type { SessionEvent } from "../loop/session-events.ts";
import { loadOptionalPackage } from "./optional-packages.ts";
import type { SessionMcpServers } from "./session-capabilities.ts";

/** The session's MCP servers, and whether the session started them (and so closes them). */
export interface ConnectedMcp {
  servers: SessionMcpServers;
  owned: boolean;
  /**
   * Set when they connect only once the first request has gone out (`waitForMcpServers: false`): called at each
   * model request, it starts them the first time, after the request's own work (idempotent).
   */
  start?: () => void;
}

/**
 * The tools that follow background tasks up (read output, answer a prompt, stop, list), for a session that has
 * a task manager: its notifications, the task status after a compaction and Bash's `run_in_background` result
 * tell the model to use them, so they are offered whenever tasks can run. Starting a task is Bash's
 * `run_in_background` (or the caller's own `task_start`); a tool of the same name the caller gave wins.
 * Sub-agents get them, like any tool, from the parent's list.
 */
export async function followUpTaskTools(
  options: AgentSessionOptions,
  link: ChildSessionLink | undefined,
): Promise<Tool[]> {
  if (!options.tasks || link) return [];
  const { createTaskTools, TASK_TOOL_NAMES } = await loadOptionalPackage(
    "@unforget/tasks",
    "tasks",
    () => import("@unforget/tasks/tools"),
  );
  const given = new Set((options.tools ?? []).map((tool) => tool.name));
  // The option's type is what the session itself calls; what it is given is a manager of @unforget/tasks.
  return createTaskTools(options.tasks as TaskManager).filter(
    (tool) => tool.name !== TASK_TOOL_NAMES.start && !given.has(tool.name),
  );
}

/**
 * The session's MCP servers: connected here from their configs with `@unforget/mcp` (and closed with the
 * session), or the app's own, connected already.
 */
export async function connectMcp(
  options: AgentSessionOptions,
  emitter: () => (event: SessionEvent) => void,
): Promise<ConnectedMcp | undefined> {
  const given = options.mcpServers;
  if (given === undefined) return undefined;
  if (isMcpServers(given)) return { servers: given, owned: false };
  if (Object.keys(given).length === 0) return undefined;
  const { connectMcpServers, McpServerError } = await loadOptionalPackage(
    "@unforget/mcp",
    "mcpServers",
    () => import("@unforget/mcp"),
  );
  const connect = (): SessionMcpServers =>
    connectMcpServers({
      servers: given satisfies Record<string, McpServerConfig>,
      cwd: options.cwd ?? process.cwd(),
      onEvent: (event) => emitter()({ type: "mcp", event }),
    });
  if (options.waitForMcpServers !== false) return { servers: connect(), owned: true };
  const deferred = deferredMcpServers(given, connect, (server) => {
    // As the servers themselves answer once closed.
    return new McpServerError(`The MCP servers were closed; "${server}" cannot be connected again.`, {
      server,
      kind: "unknown",
    });
  });
  return { servers: deferred, owned: true, start: deferred.start };
}

/**
 * Servers that start (spawn, load the MCP SDK, connect) only when asked: the first request of a session that
 * does not wait for them goes out without their cost on its path. Until then each is "connecting" with no tools;
 * `ready` or `reconnect` start them; a close before the start starts nothing.
 */
function deferredMcpServers(
  configs: Record<string, McpServerConfig>,
  connect: () => SessionMcpServers,
  closedError: (server: string) => Error,
): SessionMcpServers & { start: () => void } {
  let servers: SessionMcpServers | undefined;
  let closed = false;
  let scheduled = false;
  const started = () => {
    if (!servers && !closed) servers = connect();
    return servers;
  };
  const status = () =>
    servers?.status() ??
    Object.entries(configs).map(([server, config]) => ({
      server,
      transport: config.type,
      state: closed ? ("closed" as const) : ("connecting" as const),
      tools: [],
    }));
  return {
    // After the work already queued (the request's own): by then it is on its way.
    start() {
      if (scheduled) return;
      scheduled = true;
      setImmediate(started);
    },
    tools: () => servers?.tools() ?? [],
    status,
    ready: async () => (await started()?.ready()) ?? status(),
    reconnect: async (server) => {
      const now = started();
      if (!now) throw closedError(server);
      return now.reconnect(server);
    },
    async close() {
      closed = true;
      await servers?.close();
    },
  };
}

function isMcpServers(value: NonNullable<AgentSessionOptions["mcpServers"]>): value is SessionMcpServers {
  return (
    typeof (value as SessionMcpServers).tools === "function" &&
    typeof (value as SessionMcpServers).ready === "function"
  );
}
