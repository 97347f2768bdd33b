import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type {
  CompactionPreview,
  ContextStatus,
  DeclinedCompaction,
  LayerReport,
  PinnedItem,
  PinsStatus,
} from "@unforget/compact";
import { ConfigurationError, type ContentBlock, type Message, type Tool } from "@unforget/core";
import type { SessionHooks } from "@unforget/hooks";
import type { ContextBreakdown } from "../context/context-breakdown.ts";
import type { SessionMcpServers } from "../optional/session-capabilities.ts";
import { connectMcp, followUpTaskTools } from "../optional/session-peers.ts";
import type { PermissionGate } from "../permissions/permission-gate.ts";
import { sessionAuthorization } from "../permissions/session-permissions.ts";
import {
  AGENT_TOOL_NAME,
  createAgentTool,
  DEFAULT_AGENT_MAX_TURNS,
  type SubAgentReport,
  type SubAgentRun,
} from "../tools/agent-tool.ts";
import { sessionHistoryTools, withHistoryNote } from "../tools/history-tools.ts";
import { readSessionEntries } from "../transcript/session-transcript.ts";
import type { AgentSessionOptions, ChildSessionLink } from "./agent-session-options.ts";
import type { TurnResult } from "./run-turn.ts";
import {
  clearSession,
  closeSession,
  compactSession,
  currentSummary,
  type OpenRuntime,
  pinMessage,
  type SessionState,
  sendTurn,
  sessionStatus,
  setSessionModel,
  unpinMessage,
} from "./session-control.ts";
import type { SessionEvent } from "./session-events.ts";
import { SessionRuntime } from "./session-runtime.ts";

/** One `send`: iterate it for events as they happen, or await `result()`. */
export interface SessionTurn extends AsyncIterable<SessionEvent> {
  /**
   * Resolves when the turn has ended (rejects with the turn's typed error). When called before anyone iterates,
   * the events are not kept (nobody will read them).
   */
  result(): Promise<TurnResult>;
}

/** The context gauge and the `/context` breakdown. */
export interface SessionStatus extends ContextStatus {
  sessionId: string;
  model: string;
  providerId: string;
  transcriptPath: string;
  /** True while a turn runs. */
  busy: boolean;
  /** Estimated tokens of each part of the last request (or of the context as it stands, before any request). */
  breakdown: ContextBreakdown;
}

/** What `compact()` did. */
export interface CompactReport {
  tokensBefore: number;
  tokensAfter: number;
  /** Each layer that acted (a manual compaction is one "summary" or "session-memory" report). */
  actions: LayerReport[];
  /** Summaries written but not applied, and why (when `actions` is empty, this says why nothing changed). */
  declined: DeclinedCompaction[];
  /** With `{ preview: true }`: the summary and the tokens before and after; nothing was applied. */
  preview?: CompactionPreview;
  /** With `targetTokens`: the target, whether the context got there, in how many compactions, and why not. */
  target?: { tokens: number; reached: boolean; rounds: number; reason?: string };
}

/** How `AgentSession.compact` runs. */
export interface CompactSessionOptions {
  /** Write and measure the summary, apply nothing (`CompactReport.preview`); takes no `targetTokens`. */
  preview?: boolean;
  /**
   * Compact until the context is at or under this many tokens: another compaction while it is still over and
   * the last one made it smaller, at most three (`CompactReport.target` says how it went). None when it is
   * already there.
   */
  targetTokens?: number;
}

/** A running agent session. One turn at a time; everything it does is in its transcript. */
export interface AgentSession {
  /** The current session id (`clear()` starts a new one). */
  readonly sessionId: string;
  /** `<sessionsDir>/<sessionId>.jsonl`. */
  readonly transcriptPath: string;
  /** The model of the next call. */
  readonly model: string;
  /** Every message of the current session, in order (the transcript's messages). */
  readonly messages: readonly Message[];
  /** The session's hook bus (for hook groups of other packages; plugins go in `options.hooks.plugins`). */
  readonly hooks: SessionHooks;
  /** The permission gate (mode, rules; `/permissions` changes them here), unless an authorizer was given. */
  readonly permissions: PermissionGate | undefined;
  /** The tools of the next model call: the session's, the task and Agent tools, the MCP servers' connected now. */
  readonly tools: readonly Tool[];
  /** The MCP servers and their states (`status()`), when the session has any. */
  readonly mcpServers: SessionMcpServers | undefined;
  /**
   * Sends a prompt and runs the turn: the model is called, and its tools run, until it ends its turn, `maxTurns`
   * is reached or `signal` aborts. Throws `SessionBusyError` while another turn runs; sent while a compaction
   * or clear runs, the turn waits for it (and for the prompts sent before it), so it lands after the summary, in
   * order. Breaking out of the iteration interrupts the turn.
   */
  send(prompt: string | ContentBlock[], options?: { signal?: AbortSignal }): SessionTurn;
  /** Interrupts the running turn (as its signal would); does nothing between turns. */
  interrupt(): void;
  /**
   * Compacts now (the user's `/compact`), with instructions for this compaction only; with `{ preview: true }` the
   * summary is written and measured, and nothing is applied (`CompactReport.preview`).
   */
  compact(instructions?: string, options?: CompactSessionOptions): Promise<CompactReport>;
  /**
   * Pins a message (its id, a tool_use id it holds, or "last" for the newest message): no compaction clears,
   * folds, snips or summarises it, nor the other halves of its tool calls, while the pins fit their share of the
   * window (`context.config.pins.maxShare`, default a quarter); kept across resume. Rejects with `PinLimitError`
   * past the cap (unpin one first), `PinNotFoundError` for an id the context does not hold, and
   * `SessionBusyError` while a turn runs.
   */
  pin(id: string, options?: { by?: string }): Promise<PinnedItem>;
  /** Unpins the pin holding this message or tool_use id; false when none did. */
  unpin(id: string): Promise<boolean>;
  /** The pins, oldest first, with their sizes, their cap and whether each is honoured now; cheap. */
  pins(): PinsStatus;
  /** The gauge (tokens, threshold, turns until compaction) and the breakdown; cheap. */
  status(): SessionStatus;
  /**
   * The compaction summary the context holds now, as the model reads it (the summary, the user's carried
   * messages, the continuation); undefined while no compaction has summarised anything.
   */
  summary(): string | undefined;
  /** Changes the model for the next calls; the context is unchanged (the manager continues from its entries). */
  setModel(model: string): void;
  /** Ends this session (SessionEnd "clear") and starts a new one with an empty context (SessionStart "clear"). */
  clear(): Promise<void>;
  /** Fires SessionEnd, waits for memory's background work, closes the transcript. Safe to call twice. */
  close(reason?: string): Promise<void>;
}

/**
 * Creates an agent session: a new one, or `resume` of one in `sessionsDir`, whose next request is byte for
 * byte the one it would have sent. SessionStart fires when the first turn starts.
 */
export async function createAgentSession(options: AgentSessionOptions): Promise<AgentSession> {
  return openSession(options, undefined);
}

async function openSession(
  given: AgentSessionOptions,
  link: ChildSessionLink | undefined,
): Promise<AgentSession> {
  checkOptions(given);
  // Set once the first runtime is open; its `current` is the runtime of the current session id (a /clear
  // replaces it).
  let state: SessionState | undefined;
  const current = () => state!.current;
  const historyTools = sessionHistoryTools(given, link, current);
  const options = { ...given, system: withHistoryNote(given.system, historyTools.length > 0) };
  // Events that come before it (an MCP server connecting) have no turn to go to.
  const emitter = () => (event: SessionEvent) => state?.current.emit(event);
  const depth = link?.depth ?? 0;
  const agents = options.agents ?? {};
  const agentTool =
    Object.keys(agents).length > 0 && depth < (options.maxAgentDepth ?? 1)
      ? createAgentTool({
          agents,
          run: (run) => runSubAgent(options, current(), depth, directories, run),
          ...(options.tasks ? { tasks: options.tasks } : {}),
        })
      : undefined;
  // The packages of the options given load here, before anything is started that would need closing.
  const taskTools = await followUpTaskTools(options, link);
  const mcp = await connectMcp(options, emitter);
  const tools = (): readonly Tool[] => [
    ...(options.tools ?? []),
    ...taskTools,
    ...historyTools,
    ...(agentTool ? [agentTool] : []),
    ...(mcp?.servers.tools() ?? []),
  ];
  // One authorization per session: "always allow" answers outlive a /clear and reach sub-agents.
  const authorization = sessionAuthorization(options, options.cwd ?? process.cwd(), emitter);
  const directories = link?.directories ?? (() => authorization.gate?.directories() ?? []);
  const open: OpenRuntime = async (sessionId, source, model) => {
    const resume = source === "resume" ? await readSessionEntries(options.sessionsDir, sessionId) : undefined;
    return SessionRuntime.open(options, {
      sessionId,
      model,
      startSource: source,
      tools,
      authorize: authorization.authorize,
      directories,
      ...(mcp && options.waitForMcpServers !== false ? { ready: () => mcp.servers.ready() } : {}),
      ...(resume ? { resume } : {}),
      ...(link ? { link } : {}),
    });
  };

  let first: SessionRuntime;
  try {
    first = await open(
      options.resume ?? options.sessionId ?? randomUUID(),
      options.resume ? "resume" : "startup",
      options.model,
    );
  } catch (error) {
    // Nothing may outlive a session that failed to open (the MCP servers it started).
    if (mcp?.owned) await mcp.servers.close();
    throw error;
  }
  if (link) {
    await first.manager.recordMetadata({
      data: {
        sidechain: true,
        parentSessionId: link.parentSessionId,
        parentToolUseId: link.parentToolUseId,
        agentType: link.agentType,
        depth: link.depth,
      },
    });
  }
  state = { current: first, running: undefined, closed: false, options, tools, authorization, mcp, open };
  return sessionOf(state);
}

/** The `AgentSession` over an open session's state. */
function sessionOf(state: SessionState): AgentSession {
  return {
    get sessionId() {
      return state.current.sessionId;
    },
    get transcriptPath() {
      return state.current.transcript.path;
    },
    get model() {
      return state.current.model;
    },
    get messages() {
      return state.current.conversation;
    },
    get hooks() {
      return state.current.hooks;
    },
    get permissions() {
      return state.authorization.gate;
    },
    get tools() {
      return state.tools();
    },
    get mcpServers() {
      return state.mcp?.servers;
    },
    send: (prompt, sendOptions = {}) => sendTurn(state, prompt, sendOptions),
    interrupt() {
      state.running?.controller.abort();
    },
    compact: (instructions, options = {}) => compactSession(state, instructions, options),
    pin: (id, pinOptions = {}) => pinMessage(state, id, pinOptions.by),
    unpin: (id) => unpinMessage(state, id),
    pins: () => state.current.manager.pins(),
    status: () => sessionStatus(state),
    summary: () => currentSummary(state.current),
    setModel(model) {
      setSessionModel(state, model);
    },
    clear: () => clearSession(state),
    close: (reason = "other") => closeSession(state, reason),
  };
}

/** Runs one sub-agent in a child session beside the parent's transcript and returns its report. */
async function runSubAgent(
  parentOptions: AgentSessionOptions,
  parent: SessionRuntime,
  depth: number,
  directories: () => readonly string[],
  run: SubAgentRun,
): Promise<SubAgentReport> {
  const allowed = run.definition.tools;
  const tools = [...parent.tools.values()].filter(
    (tool) => tool.name !== AGENT_TOOL_NAME && (allowed === undefined || allowed.includes(tool.name)),
  );
  const {
    memory: _memory,
    resume: _resume,
    toolState: _toolState,
    canUseTool: _canUseTool,
    mcpServers: _mcpServers,
    // A sub-agent has no user to pause for: its report goes to the parent.
    pauseAfterCompaction: _pause,
    context,
    ...inherited
  } = parentOptions;
  const { attachments: _attachments, onEvent: _onEvent, ...childContext } = context ?? {};
  const child = await openSession(
    {
      ...inherited,
      // The parent's gate decides for its sub-agents too: its rules, its mode, its questions to the user.
      permissions: parent.authorize,
      context: childContext,
      model: run.definition.model ?? parent.model,
      system: run.definition.prompt,
      tools,
      sessionsDir: join(parentOptions.sessionsDir, parent.sessionId, "subagents"),
      sessionId: `agent-${randomUUID()}`,
      maxTurns: run.definition.maxTurns ?? DEFAULT_AGENT_MAX_TURNS,
    },
    {
      depth: depth + 1,
      parentSessionId: parent.sessionId,
      parentToolUseId: run.toolUseId,
      agentType: run.agentType,
      directories,
    },
  );
  try {
    const turn = child.send(run.prompt, { signal: run.signal });
    for await (const event of turn) {
      parent.emit({ type: "subagent", parentToolUseId: run.toolUseId, agentType: run.agentType, event });
      if (run.log && event.type === "tool-end") await run.log(`${event.name}: ${event.status}`);
    }
    const result = await turn.result();
    return {
      text: result.text,
      stopReason: result.stopReason,
      turns: result.turns,
      sessionId: child.sessionId,
      transcriptPath: child.transcriptPath,
    };
  } finally {
    await child.close("other");
  }
}

/** Names the providers accept for tools (Anthropic's and Bedrock's rule). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Refuses options no session can run with: a tool name the providers refuse, two tools of one name, a bad
 * `maxTurns`, a resume under another id, an empty sessions folder.
 */
function checkOptions(options: AgentSessionOptions): void {
  const seen = new Set<string>();
  for (const tool of options.tools ?? []) {
    if (!TOOL_NAME.test(tool.name)) {
      throw new ConfigurationError(
        `The tool name "${tool.name}" is not one the providers accept: use 1 to 64 letters, digits, "_" or "-".`,
        { setting: "tools" },
      );
    }
    if (seen.has(tool.name) || (tool.name === AGENT_TOOL_NAME && options.agents)) {
      throw new ConfigurationError(
        `Two tools are named "${tool.name}"; tool names must be unique in a session (rename one, or leave one out).`,
        { setting: "tools" },
      );
    }
    seen.add(tool.name);
  }
  if (options.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns >= 1)) {
    throw new ConfigurationError(
      `maxTurns must be a whole number of at least 1; it was ${options.maxTurns}.`,
      {
        setting: "maxTurns",
      },
    );
  }
  if (
    options.resume !== undefined &&
    options.sessionId !== undefined &&
    options.resume !== options.sessionId
  ) {
    throw new ConfigurationError(
      `Both resume (${options.resume}) and sessionId (${options.sessionId}) were given; a resumed session keeps its id, so pass only resume.`,
      { setting: "sessionId" },
    );
  }
  if (options.sessionsDir.trim() === "") {
    throw new ConfigurationError("sessionsDir is empty; give the folder where transcripts are kept.", {
      setting: "sessionsDir",
    });
  }
}
