import { join } from "node:path";
import {
  type ContextEvent,
  type ContextManager,
  createContextManager,
  createRecentFilesProvider,
  createTodosProvider,
  type PrepareOptions,
  type PrepareResult,
} from "@unforget/compact";
import {
  type Attachment,
  createMessage,
  getToolUses,
  type Message,
  type ModelRequest,
  type TextBlock,
  type Tool,
  type ToolDefinition,
  type ToolSessionState,
} from "@unforget/core";
import {
  applyPlugins,
  createCommandHooksPlugin,
  createSessionHooks,
  type HookPlugin,
  type SessionHooks,
  type SessionStartSource,
} from "@unforget/hooks";
import type { TaskManager, TaskNotification } from "@unforget/tasks";
import { type Calibrator, createCalibrator } from "@unforget/tokens";
import {
  allowDirectories,
  forgetReadContents,
  readFilesOf,
  restoreReadState,
  todosOf,
} from "@unforget/tools";
import type { TranscriptEntry } from "@unforget/transcript";
import { attachmentToMessage } from "../context/attachment-message.ts";
import { backgroundModel, summarizerOf } from "../context/summarizer-model.ts";
import { loadOptionalPackage } from "../optional/optional-packages.ts";
import type { SessionNotes } from "../optional/session-capabilities.ts";
import { attachSessionMemory, extractedThrough } from "../optional/session-memory-wiring.ts";
import type { SessionSpan, SessionTracer } from "../telemetry/session-tracer.ts";
import { createGlobalOpenTelemetryTracer } from "../telemetry/telemetry.ts";
import type { ToolCallAuthorizer } from "../tools/tool-authorization.ts";
import { ToolInputValidator } from "../tools/tool-input-validator.ts";
import {
  DEFAULT_MAX_TOOL_CONCURRENCY,
  DEFAULT_TOOL_TIMEOUT_MS,
  interruptedText,
  type ToolRunnerContext,
} from "../tools/tool-runner.ts";
import { SessionTranscript, transcriptPathOf } from "../transcript/session-transcript.ts";
import type { AgentSessionOptions, ChildSessionLink } from "./agent-session-options.ts";
import { systemPrompt, toolDefinitions, withLastMessageBreakpoint } from "./prompt-caching.ts";
import { errorText } from "./session-errors.ts";
import type { SessionEvent } from "./session-events.ts";

/** The output limit of a model call when the options set none, at most (Claude Code's default cap). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_000;

/** What Claude Code writes when the user cuts a turn short; models know these words. */
export const INTERRUPTED_TEXT = "[Request interrupted by user]";
export const INTERRUPTED_FOR_TOOL_USE_TEXT = "[Request interrupted by user for tool use]";

/** OpenTelemetry's global tracer once an SDK has registered one (no-ops, and the API not loaded, until then). */
const defaultTracer: SessionTracer = createGlobalOpenTelemetryTracer();

/** What opening a runtime needs besides the session's options. */
export interface RuntimeInit {
  sessionId: string;
  model: string;
  /** Entries of the transcript being resumed. */
  resume?: readonly TranscriptEntry[];
  /** What SessionStart will say when the first turn starts. */
  startSource: Exclude<SessionStartSource, "compact">;
  calibrator?: Calibrator;
  link?: ChildSessionLink;
  /** The tools of the next model call (the session's, the Agent tool, the MCP servers' connected now). */
  tools: () => readonly Tool[];
  /** The folders the permission gate counts as working directories now; the tools are granted them too. */
  directories?: () => readonly string[];
  /** Awaited before the first turn (the MCP servers' first connection). */
  ready?: () => Promise<unknown>;
  /** Decides about each tool call; one per session, shared by its runtimes and sub-agents. */
  authorize: ToolCallAuthorizer;
}

/**
 * Everything that belongs to one session id: its transcript, hook bus, context manager, conversation, memory
 * and tool state. A `/clear` opens a new runtime; `setModel` rebuilds only the manager, from its own entries.
 */
export class SessionRuntime {
  readonly options: AgentSessionOptions;
  readonly sessionId: string;
  readonly transcript: SessionTranscript;
  readonly hooks: SessionHooks;
  /** The messages the context still needs, in order (what the manager receives; trimmed by `trimConversation`). */
  readonly conversation: Message[];
  /** The messages of the running turn (its `TurnResult.messages`), whatever trimming does meanwhile. */
  turnMessages: Message[] | undefined;
  extractedThrough: string | undefined; // The last message memory extraction read: what follows it is kept.
  readonly toolState: ToolSessionState;
  readonly calibrator: Calibrator;
  readonly validator = new ToolInputValidator();
  readonly link: ChildSessionLink | undefined;
  readonly tracer: SessionTracer;
  model: string;
  manager: ContextManager;
  /** Managers a model change replaced: their outputs still being saved are waited for at `close`. */
  #retired: ContextManager[] = [];
  /** Memory wired on the bus (`attachMemory` of `@unforget/memory`): its background work, awaited at close. */
  memory: { idle(): Promise<void> } | undefined;
  notes: SessionNotes | undefined;
  /** Where the running turn's events go (a no-op between turns). */
  emit: (event: SessionEvent) => void = () => {};
  /** The running turn's span, parent of the model, tool and compaction spans. */
  turnSpan: SessionSpan | undefined;
  lastPrepared: PrepareResult | undefined;
  /** Turns task notifications into an attachment (`@unforget/tasks`, loaded when the session has tasks). */
  #taskAttachment: ((notifications: TaskNotification[]) => Attachment | undefined) | undefined;
  #pendingStart: Exclude<SessionStartSource, "compact"> | undefined;
  #ready: (() => Promise<unknown>) | undefined;
  readonly #directories: (() => readonly string[]) | undefined;
  readonly #toolSource: () => readonly Tool[];
  #tools: Map<string, Tool>;
  #definitions: ToolDefinition[];
  #system: string | TextBlock[] | undefined;
  readonly #authorize: ToolCallAuthorizer;

  private constructor(
    options: AgentSessionOptions,
    init: RuntimeInit,
    parts: {
      transcript: SessionTranscript;
      hooks: SessionHooks;
      conversation: Message[];
      notes: SessionNotes | undefined;
      taskAttachment?: (notifications: TaskNotification[]) => Attachment | undefined;
    },
  ) {
    this.options = options;
    this.sessionId = init.sessionId;
    this.model = init.model;
    this.transcript = parts.transcript;
    this.hooks = parts.hooks;
    this.conversation = parts.conversation;
    this.notes = parts.notes;
    this.#taskAttachment = parts.taskAttachment;
    this.link = init.link;
    this.tracer = options.tracer ?? defaultTracer;
    this.toolState = options.toolState ?? new Map();
    // Restores what the tools read before the resume: edits allowed then stay allowed, a file changed since is refused.
    if (init.resume !== undefined) restoreReadState(this.toolState, this.conversation);
    this.calibrator = init.calibrator ?? options.context?.calibrator ?? createCalibrator();
    this.#pendingStart = init.startSource;
    this.#ready = init.ready;
    this.#directories = init.directories;
    this.#toolSource = init.tools;
    this.#tools = new Map();
    this.#definitions = [];
    this.refreshTools();
    const caching = options.promptCaching !== false && options.provider.capabilities.promptCaching;
    this.#system = systemPrompt(options.system, caching);
    this.#authorize = init.authorize;
    this.manager = this.#createManager(init.resume);
  }

  /** Opens the transcript (resumed or new), creates the bus with every plugin, memory and tasks, and the manager. */
  static async open(options: AgentSessionOptions, init: RuntimeInit): Promise<SessionRuntime> {
    // The packages of the options given load first: a missing one fails before anything is opened.
    const memory = init.link ? undefined : options.memory;
    const memoryPackage = memory
      ? await loadOptionalPackage("@unforget/memory", "memory", () => import("@unforget/memory"))
      : undefined;
    const tasksPackage = options.tasks
      ? await loadOptionalPackage("@unforget/tasks", "tasks", () => import("@unforget/tasks/tools"))
      : undefined;
    // The option's type is what the session itself calls; what it is given is a manager of @unforget/tasks.
    const tasks = options.tasks as TaskManager | undefined;
    const path = transcriptPathOf(options.sessionsDir, init.sessionId);
    const transcript = await SessionTranscript.open(path, init.sessionId, init.resume ?? []);
    let runtime: SessionRuntime | undefined;
    const hooks = createSessionHooks({
      sessionId: init.sessionId,
      onHookError: (error) => {
        runtime?.emit({ type: "hook-error", message: error.message });
        options.hooks?.onHookError?.(error);
      },
      onHookResult: (entry) => {
        transcript.appendEntry(entry).catch((error: unknown) => {
          runtime?.emit({
            type: "hook-error",
            message: `A hook result could not be written: ${errorText(error)}`,
          });
        });
      },
    });
    const plugins: HookPlugin[] = [...(options.hooks?.plugins ?? [])];
    if (options.hooks?.commands) {
      plugins.push(
        createCommandHooksPlugin({
          projectDir: options.cwd ?? process.cwd(),
          transcriptPath: path,
          ...options.hooks.commandOptions,
          settings: options.hooks.commands,
        }),
      );
    }
    if (tasks && tasksPackage) plugins.push(tasksPackage.createTaskStatusPlugin(tasks));
    applyPlugins(hooks, plugins);
    const conversation = (init.resume ?? []).flatMap((entry) =>
      entry.type === "message" ? [entry.message] : [],
    );
    const notes =
      memory?.sessionNotes === true
        ? await memoryPackage!.createSessionMemory({
            directory: join(options.sessionsDir, init.sessionId, "session-memory"),
            ...backgroundModel(options, init.model),
            getMessages: () => conversation,
            ...(typeof options.system === "string" ? { system: options.system } : {}),
            onError: (error) =>
              runtime?.emit({ type: "hook-error", message: `Session notes: ${errorText(error)}` }),
          })
        : memory?.sessionNotes || undefined;
    runtime = new SessionRuntime(options, init, {
      transcript,
      hooks,
      conversation,
      notes,
      ...(tasksPackage ? { taskAttachment: tasksPackage.createTaskNotificationAttachment } : {}),
    });
    if (memory && memoryPackage) {
      runtime.memory = attachSessionMemory(
        runtime,
        memoryPackage.attachMemory,
        memory,
        extractedThrough(init.resume ?? [], conversation),
      );
    }
    return runtime;
  }

  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /**
   * Called before each model call: takes the tools of the moment (an MCP server may have come or gone). The
   * definitions keep their identity while the tools are the same, so the request's prefix stays cached.
   */
  refreshTools(): void {
    const tools = this.#toolSource();
    const same =
      tools.length === this.#tools.size && tools.every((tool) => this.#tools.get(tool.name) === tool);
    if (same) return;
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
    const caching = this.options.promptCaching !== false && this.options.provider.capabilities.promptCaching;
    this.#definitions = toolDefinitions(tools, caching);
  }

  /** The system prompt as sent (with its cache breakpoint). */
  get system(): string | TextBlock[] | undefined {
    return this.#system;
  }

  /** The tool definitions as sent. */
  get definitions(): readonly ToolDefinition[] {
    return this.#definitions;
  }

  /** The messages of the last request (undefined before the first). */
  get projected(): readonly Message[] | undefined {
    return this.lastPrepared?.projected;
  }

  /** Everything the manager recorded (the transcript's entries). */
  get entries(): readonly TranscriptEntry[] {
    return this.manager.entries;
  }

  get cwd(): string {
    return this.options.cwd ?? process.cwd();
  }

  /** The output limit of each model call. */
  get maxTokens(): number {
    return (
      this.options.maxTokens ??
      Math.min(this.options.provider.getModelLimits(this.model).maxOutputTokens, DEFAULT_MAX_OUTPUT_TOKENS)
    );
  }

  /** The request's shape: the manager counts it from its creation on, summaries reuse it (same cache prefix). */
  prepareOptions(signal?: AbortSignal): PrepareOptions {
    const options: PrepareOptions = { tools: this.#definitions, maxTokens: this.maxTokens };
    if (this.#system !== undefined) options.system = this.#system;
    if (signal) options.signal = signal;
    return options;
  }

  /** The request for what `prepare` (or `recover`) returned. */
  request(prepared: PrepareResult): ModelRequest {
    const caching = this.options.promptCaching !== false && this.options.provider.capabilities.promptCaching;
    const request: ModelRequest = {
      model: this.model,
      messages: caching ? withLastMessageBreakpoint(prepared.messages) : prepared.messages,
      maxTokens: this.maxTokens,
    };
    if (this.#system !== undefined) request.system = this.#system;
    if (this.#definitions.length > 0) request.tools = this.#definitions;
    if (this.options.thinking) request.thinking = this.options.thinking;
    if (this.options.temperature !== undefined) request.temperature = this.options.temperature;
    if (this.options.providerOptions) request.providerOptions = this.options.providerOptions;
    if (prepared.contextManagement) request.contextManagement = prepared.contextManagement;
    return request;
  }

  /** Decides about each tool call (the session's gate, or the authorizer it was given). */
  get authorize(): ToolCallAuthorizer {
    return this.#authorize;
  }

  /**
   * Grants the tools the folders the permission gate allows (those of the settings and those a user's answer
   * added), so that a path the gate let through is one the tools accept. Called right before each tool call runs.
   */
  syncDirectories(): void {
    const directories = this.#directories?.() ?? [];
    if (directories.length > 0) allowDirectories(this.toolState, directories);
  }

  /** What the tool runner needs for this turn. */
  toolContext(): ToolRunnerContext {
    return {
      tools: this.#tools,
      hooks: this.hooks,
      authorize: this.#authorize,
      validator: this.validator,
      sessionId: this.sessionId,
      transcriptPath: this.transcript.path,
      cwd: this.cwd,
      sessionState: this.toolState,
      defaultTimeoutMs: this.options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      maxConcurrency: this.options.maxToolConcurrency ?? DEFAULT_MAX_TOOL_CONCURRENCY,
      tracer: this.tracer,
      emit: this.emit,
      beforeExecute: () => this.syncDirectories(),
    };
  }

  /** Appends a message to the conversation and the transcript (on disk before this resolves), and streams it. */
  async append(message: Message): Promise<void> {
    this.conversation.push(message);
    this.turnMessages?.push(message);
    await this.transcript.appendMessage(message);
    this.emit({ type: "message", message });
  }

  /** Appends attachments as meta user messages (empty ones are skipped: providers refuse empty text). */
  async appendAttachments(attachments: readonly Attachment[]): Promise<void> {
    for (const attachment of attachments) {
      const empty =
        typeof attachment.content === "string"
          ? attachment.content.trim() === ""
          : attachment.content.length === 0;
      if (!empty) await this.append(attachmentToMessage(attachment));
    }
  }

  /**
   * Called at the start of every turn: fires SessionStart once (startup, resume or clear) with its attachments,
   * and answers tool uses a crash or a failed write left without results, so the conversation is valid.
   */
  async beginTurn(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    await ready?.();
    await this.#answerDanglingToolUses();
    const source = this.#pendingStart;
    if (source === undefined) return;
    this.#pendingStart = undefined;
    const attachments = await this.hooks.sessionStart.promise([], {
      sessionId: this.sessionId,
      transcriptId: this.transcript.path,
      source,
    });
    await this.appendAttachments(attachments);
  }

  /** Background task notifications become an attachment before the next model call. */
  async deliverTaskNotifications(): Promise<void> {
    const tasks = this.options.tasks;
    if (!tasks || !this.#taskAttachment) return;
    const notifications = await tasks.takeNotifications();
    const attachment = this.#taskAttachment(notifications as TaskNotification[]);
    if (!attachment) return;
    this.emit({ type: "task-notification", notifications });
    await this.appendAttachments([attachment]);
  }

  /** Changes the model: a new manager goes on from the current one's entries and counts (the context is unchanged). */
  setModel(model: string): void {
    this.model = model;
    this.#retired.push(this.manager);
    this.manager = this.#createManager(this.manager.entries, this.manager);
  }

  /** Fires SessionEnd, lets memory's background work and the outputs being saved finish, closes the transcript. */
  async close(reason: string): Promise<void> {
    await this.hooks.sessionEnd.promise({
      sessionId: this.sessionId,
      transcriptId: this.transcript.path,
      reason,
    });
    await this.memory?.idle();
    await Promise.all([...this.#retired, this.manager].map((manager) => manager.flush?.()));
    await this.transcript.close();
  }

  #createManager(resume: readonly TranscriptEntry[] | undefined, continues?: ContextManager): ContextManager {
    const context = this.options.context ?? {};
    const state = this.toolState;
    return createContextManager({
      sessionDir: join(this.options.sessionsDir, this.sessionId),
      // What compaction may do with each tool's old results, as the tool of the moment declares it.
      resultRetention: (name) => {
        const tool = this.#tools.get(name);
        return tool === undefined ? undefined : (tool.resultRetention ?? "persist");
      },
      // After a compaction: the files the tools read, fresh from disk, and the todo list, from the tools' state.
      attachments: [
        createRecentFilesProvider({
          root: this.cwd,
          recentPaths: () => readFilesOf(state).flatMap((file) => (file.kind === "text" ? [file.path] : [])),
        }),
        createTodosProvider({ todos: () => todosOf(state) }),
      ],
      ...summarizerOf(this.options),
      retainEntries: "context", // Only what the context is projected from stays in memory (docs/decisions/0043).
      ...context,
      model: this.model,
      provider: this.options.provider,
      hooks: this.hooks,
      sessionId: this.sessionId,
      transcript: this.transcript.sink,
      calibrator: this.calibrator,
      request: this.prepareOptions(),
      ...(resume && resume.length > 0 ? { resume, ...(continues && { continues }) } : {}),
      ...(this.notes ? { sessionMemory: this.notes } : {}),
      onEvent: (event) => {
        context.onEvent?.(event);
        this.#observeContext(event);
      },
    });
  }

  #observeContext(event: ContextEvent): void {
    this.emit({ type: "context", event });
    if (event.type !== "layer") return;
    // Earlier tool results may be gone from the context: a re-read must return the file, not "unchanged".
    forgetReadContents(this.toolState);
    try {
      this.tracer
        .startSpan(
          {
            kind: "compaction",
            sessionId: this.sessionId,
            layer: event.layer,
            trigger: event.trigger,
            startTime: Date.now() - event.durationMs,
          },
          this.turnSpan,
        )
        .end({ tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter });
    } catch {
      // A tracer that throws must not break the loop.
    }
  }

  async #answerDanglingToolUses(): Promise<void> {
    const last = this.conversation.at(-1);
    if (last?.role !== "assistant") return;
    const uses = getToolUses(last);
    if (uses.length === 0) return;
    await this.append(
      createMessage(
        "user",
        uses.map((use) => ({
          type: "tool_result" as const,
          tool_use_id: use.id,
          content: interruptedText(use.name),
          is_error: true,
        })),
      ),
    );
  }
}
