import type { ContextManagerOptions } from "@unforget/compact";
import type { ModelProvider, TextBlock, ThinkingConfig, Tool, ToolSessionState } from "@unforget/core";
import type { CommandHooksPluginOptions, HookCommandSettings, HookError, HookPlugin } from "@unforget/hooks";
import type {
  SessionDreamJob,
  SessionMcpServerConfig,
  SessionMcpServers,
  SessionMemoryStore,
  SessionNotes,
  SessionProposalQueue,
  SessionTaskManager,
} from "../optional/session-capabilities.ts";
import type { PermissionGate } from "../permissions/permission-gate.ts";
import type { CanUseTool, PermissionGateOptions } from "../permissions/permission-types.ts";
import type { SessionTracer } from "../telemetry/session-tracer.ts";
import type { AgentDefinition } from "../tools/agent-tool.ts";
import type { ToolCallAuthorizer } from "../tools/tool-authorization.ts";

/** The hook bus of the session: plugins and Claude Code command hooks, on one bus created per session. */
export interface SessionHookOptions {
  /** Applied to the session's bus, in order (each `apply` is called once per session and per sub-agent). */
  plugins?: readonly HookPlugin[];
  /** Claude Code command hooks, usually `(await loadHookSettings({ projectDir })).hooks`; run on the same bus. */
  commands?: HookCommandSettings;
  /** Options of the command hooks plugin besides `settings` (`projectDir` defaults to the session's `cwd`). */
  commandOptions?: Partial<Omit<CommandHooksPluginOptions, "settings">>;
  /** Every plugin failure, besides the `hook-error` event of the running turn. Never throws into the session. */
  onHookError?: (error: HookError) => void;
}

/**
 * Long-term memory and session notes, wired through `attachMemory` of `@unforget/memory`, which the session
 * loads when it opens (install it beside the session; without it, `SessionPackageMissingError`).
 */
export interface SessionMemoryOptions {
  /** The memory dir (or team memory, or a networked store): its MEMORY.md index comes in at session start. */
  store: SessionMemoryStore;
  /** What extraction may do: "propose" (default) queues changes for the user, "auto" writes, "off" extracts nothing. */
  consent?: "propose" | "auto" | "off";
  /** Where "propose" queues changes. */
  proposals?: SessionProposalQueue;
  /** Recall relevant memories on every prompt (default), on the first only, or never. */
  recall?: "every-prompt" | "first-prompt" | "off";
  /** A smaller model (on the session's provider) for retrieval, extraction and session notes; default `summarizer`'s, else the session's model. */
  model?: string;
  /**
   * Session notes kept up to date in the background, which compaction then uses without a model call: `true`
   * keeps them in `<sessionsDir>/<sessionId>/session-memory/`, or pass your own.
   */
  sessionNotes?: boolean | SessionNotes;
  /** Counts ended sessions for the dream (consolidation) gates. */
  dream?: SessionDreamJob;
}

/**
 * Who decides whether a tool call may run: the options of Claude Code's permission model (the session builds the
 * gate, with its `cwd` and `canUseTool`), a `PermissionGate` the app keeps (to change the mode, add rules), or
 * any `ToolCallAuthorizer`.
 */
export type SessionPermissions =
  | Omit<PermissionGateOptions, "cwd" | "canUseTool">
  | PermissionGate
  | ToolCallAuthorizer;

export interface AgentSessionOptions {
  /** The model provider (`createAnthropicProvider()`, `createProviderFromEnv()`, …). */
  provider: ModelProvider;
  /** The model id, in the provider's naming; `setModel` changes it between turns. */
  model: string;
  /** The system prompt. */
  system?: string | TextBlock[];
  /** The tools the model may call (core's `Tool` contract); names must be unique. */
  tools?: readonly Tool[];
  /** Plugins and command hooks on the session's bus. */
  hooks?: SessionHookOptions;
  /**
   * Options of the context manager (`createContextManager` from `@unforget/compact`): limits, thresholds,
   * layers, summariser, attachments restored after a compaction, clock. The session sets the rest.
   */
  context?: Omit<
    ContextManagerOptions,
    "model" | "provider" | "hooks" | "sessionId" | "transcript" | "resume" | "continues" | "sessionMemory"
  >;
  memory?: SessionMemoryOptions;
  /**
   * The model (and its provider, default the session's) that writes compaction summaries, session notes and
   * memory extraction — typically a cheaper one; default the session's model. A summary call on another model
   * reads none of the session's prompt cache. `context.summarizer` wins for summaries, `memory.model` for memory.
   */
  summarizer?: { provider?: ModelProvider; model: string };
  /**
   * The history tools (`context_status`, `history_search`, `history_read`) and a paragraph about them after the
   * system prompt (about 600 tokens on every request); default false. A tool the caller gives under one of those
   * names replaces the built-in one.
   */
  history?: boolean;
  /**
   * Background tasks (a `TaskManager` of `@unforget/tasks`, which the session then loads for the follow-up
   * tools): their notifications reach the model before its next call, their status after a compaction.
   */
  tasks?: SessionTaskManager;
  /** Where transcripts live: `<sessionsDir>/<sessionId>.jsonl` (sub-agents in `<sessionId>/subagents/`). */
  sessionsDir: string;
  /** The id of a new session; default a random UUID. */
  sessionId?: string;
  /** The id of a session in `sessionsDir` to continue: the next request is exactly the one it would have sent. */
  resume?: string;
  /**
   * Whether each tool call may run; default Claude Code's `default` mode with no rules: read-only tools inside
   * the working directory run, anything else asks `canUseTool` (and is denied when there is none).
   * `{ mode: "bypassPermissions" }` runs every call that no deny or ask rule catches.
   */
  permissions?: SessionPermissions;
  /** Asked about a call the rules leave open (the UI's prompt); with the session's own gate only. */
  canUseTool?: CanUseTool;
  /** Most model calls per `send` (default unlimited); the turn then ends with "max_turns" and a valid conversation. */
  maxTurns?: number;
  /**
   * Ends the turn when an automatic compaction summarised the context while the model was working through tool
   * calls, before the request after it (stop reason "compacted"): the user can read the summary and steer, and
   * the next `send` goes on from there. Default false: the turn carries on. A compaction before the turn's first
   * request (the user's message just sent) never pauses.
   */
  pauseAfterCompaction?: boolean;
  /** Output limit of each model call; default the model's output limit, at most 32,000. */
  maxTokens?: number;
  /** Extended thinking, passed on to each model call. */
  thinking?: ThinkingConfig;
  temperature?: number;
  /** Provider-specific request fields, passed on to each model call. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Mark the system prompt, tools and last message for prompt caching where the provider caches; default true. */
  promptCaching?: boolean;
  /** The working directory tools resolve paths against; default `process.cwd()`. */
  cwd?: string;
  /** State tools keep across calls (the files read, the todo list); pass one to build compaction attachments from it. */
  toolState?: ToolSessionState;
  /** A call's timeout when its tool sets none; default ten minutes. */
  toolTimeoutMs?: number;
  /** Most calls run at once in a batch of concurrency-safe calls; default 10. */
  maxToolConcurrency?: number;
  /** Sub-agents the model may start with the Agent tool, by name. */
  agents?: Readonly<Record<string, AgentDefinition>>;
  /** How deep sub-agents may nest: 1 (default) lets this session start agents that cannot start their own. */
  maxAgentDepth?: number;
  /**
   * MCP servers (Claude Code's `.mcp.json` entries, e.g. from `readMcpConfig`), whose tools join the session as
   * `mcp__<server>__<tool>`; or servers the app connected itself (the session then leaves closing them to it).
   * A server that fails is reported (an `mcp` event) and its tools removed; the session goes on. Configs are
   * connected with `@unforget/mcp`, loaded when the session opens; connected servers need nothing more.
   */
  mcpServers?: Record<string, SessionMcpServerConfig> | SessionMcpServers;
  /**
   * Whether the first model request waits until every MCP server has connected or failed (default true), so that
   * it offers every server's tools. With false it goes out at once with the tools connected by then, and each
   * server's tools join the first request after it connects (at the cost of one change to the cached prefix).
   */
  waitForMcpServers?: boolean;
  /**
   * Spans for each turn, model call, tool call and compaction; default OpenTelemetry's global tracer when
   * `@opentelemetry/api` is installed (no-ops without an SDK), else none.
   */
  tracer?: SessionTracer;
}

/** What a sub-agent's session inherits, set by the Agent tool (not for callers). */
export interface ChildSessionLink {
  /** Nesting depth of this session (0 for a top-level session). */
  depth: number;
  parentSessionId: string;
  parentToolUseId: string;
  agentType: string;
  /** The parent's working directories, which its gate (shared with the sub-agent) allows. */
  directories: () => readonly string[];
}
