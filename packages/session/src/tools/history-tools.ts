import { join } from "node:path";
import { createContextStatusTool } from "@unforget/compact";
import type { TextBlock, Tool } from "@unforget/core";
import {
  createHistorySource,
  createHistoryTools,
  HISTORY_TOOLS_NOTE,
  type HistorySource,
  type SessionHistory,
} from "@unforget/history";
import type { AgentSessionOptions, ChildSessionLink } from "../loop/agent-session-options.ts";
import type { SessionRuntime } from "../loop/session-runtime.ts";

/** What the system prompt says about the history tools, so the model reaches for them instead of re-running. */
export const HISTORY_SYSTEM_NOTE = HISTORY_TOOLS_NOTE;

/**
 * The session's built-in history tools (`context_status`, `history_search`, `history_read`), unless the caller
 * did not turn them on or gave tools of those names (the caller's win). They follow the current runtime, so after a
 * /clear they read the new session. Sub-agents get the parent's, like any tool, from the parent's list.
 */
export function sessionHistoryTools(
  options: AgentSessionOptions,
  link: ChildSessionLink | undefined,
  current: () => SessionRuntime,
): Tool[] {
  if (options.history !== true || link) return [];
  // One source per transcript: a /clear starts a new one. The source retries an open that failed.
  let opened: { path: string; source: HistorySource } | undefined;
  const history = (): Promise<SessionHistory> => {
    const runtime = current();
    const path = runtime.transcript.path;
    if (opened?.path !== path) {
      const sessionDir = join(options.sessionsDir, runtime.sessionId);
      opened = { path, source: createHistorySource({ transcriptPath: path, sessionDir }) };
    }
    return opened.source();
  };
  const manager = {
    status: () => current().manager.status(),
    pins: () => current().manager.pins(),
    get entries() {
      return current().manager.entries;
    },
  };
  const given = new Set((options.tools ?? []).map((tool) => tool.name));
  return [createContextStatusTool(manager), ...createHistoryTools(history)].filter(
    (tool) => !given.has(tool.name),
  );
}

/** The system prompt with the history note after it, when the history tools are offered. */
export function withHistoryNote(
  system: AgentSessionOptions["system"],
  offered: boolean,
): AgentSessionOptions["system"] {
  if (!offered) return system;
  if (system === undefined || system === "") return HISTORY_SYSTEM_NOTE;
  if (typeof system === "string") return `${system}\n\n${HISTORY_SYSTEM_NOTE}`;
  return [...system, { type: "text", text: HISTORY_SYSTEM_NOTE } satisfies TextBlock];
}
