import { ProviderRequestError, type Tool } from "@unforget/core";
import type { AgentSession, CanUseTool, PermissionResponse, SessionEvent } from "@unforget/session";
import type { TaskInfo } from "@unforget/tasks";
import type { AgentEnvironment } from "../agent/agent-environment.ts";
import { describeMcpFailure, describeMcpOutcome } from "../agent/mcp-outcome.ts";
import { describeCall, describeContextEvent, describeSuggestions } from "./describe-call.ts";
import { drawConversation, toolItem } from "./draw-conversation.ts";
import type { ReplStore } from "./repl-state.ts";
import { findCommand, SLASH_COMMANDS, suggestCommand } from "./slash-commands.ts";

/**
 * Drives the session for the terminal UI: sends prompts, turns session events into what the screen shows, runs
 * slash commands, asks the permission questions, and owns Ctrl-C. The Ink components only read the store and
 * call these methods, so all of this is tested without a terminal.
 */
export class ReplController {
  readonly store: ReplStore;
  environment: AgentEnvironment | undefined;
  session: AgentSession | undefined;
  readonly #onExit: () => void;
  #tasksTimer: NodeJS.Timeout | undefined;
  /** Tasks seen running, whose end gets a line the moment it is seen. */
  readonly #runningTasks = new Set<string>();
  /** Tasks whose end was drawn already (the notification the model gets with the next prompt is not drawn again). */
  readonly #endedTasks = new Set<string>();
  /** When this REPL started: a task started and ended between two looks still gets its line. */
  readonly #startedAt = Date.now();
  /** MCP servers whose failure is on the screen already (as it happened, during a turn). */
  readonly #mcpReported = new Set<string>();

  constructor(store: ReplStore, onExit: () => void) {
    this.store = store;
    this.#onExit = onExit;
  }

  /** Called once the session is open: the screen shows its state, and the first prompt (if any) is sent. */
  attach(environment: AgentEnvironment, session: AgentSession): void {
    this.environment = environment;
    this.session = session;
    this.store.update({ phase: "ready" });
    this.refreshStatus();
    void this.reportMcp();
    void this.refreshTasks();
    // Running tasks change on their own; their count in the status line is read every few seconds.
    this.#tasksTimer = setInterval(() => void this.refreshTasks(), 2000);
    this.#tasksTimer.unref();
  }

  /** The permission prompt: the gate asks here about each call its rules leave open. */
  readonly canUseTool: CanUseTool = (tool: Tool, input, options) =>
    new Promise<PermissionResponse>((resolve) => {
      const finish = (response: PermissionResponse) => {
        options.signal.removeEventListener("abort", onAbort);
        this.store.update({ permission: undefined });
        resolve(response);
      };
      const onAbort = () => finish({ behavior: "deny", message: "The turn was interrupted." });
      options.signal.addEventListener("abort", onAbort, { once: true });
      this.store.update({
        permission: {
          toolName: tool.name,
          title: describeCall(tool.name, input, 200),
          reason: options.reason,
          suggestions: options.suggestions,
          alwaysLabel: describeSuggestions(options.suggestions),
          answer: (choice) => {
            if (choice === "deny")
              finish({
                behavior: "deny",
                message: "The user denied this call. Ask them what to do instead, or take another way.",
              });
            else if (choice === "always" && options.suggestions.length > 0)
              finish({ behavior: "allow", updatedPermissions: options.suggestions });
            else finish({ behavior: "allow" });
          },
        },
      });
    });

  /** Enter: a slash command, or a prompt (queued while a turn runs). */
  submit(text: string): void {
    const prompt = text.trim();
    if (prompt === "") return;
    this.store.update({ exitArmed: false });
    if (prompt.startsWith("/")) {
      void this.runCommand(prompt);
      return;
    }
    if (this.store.getState().busy) {
      this.store.update((state) => ({ queued: [...state.queued, prompt] }));
      return;
    }
    void this.runTurn(prompt);
  }

  /** Ctrl-C: cancels the running call (or the question), else arms exit; pressed again, exits. */
  interruptOrExit(): void {
    const state = this.store.getState();
    if (state.exitArmed) {
      void this.exit();
      return;
    }
    if (state.busy) {
      this.session?.interrupt();
      this.store.update({ queued: [] });
    }
    this.store.update({ exitArmed: true });
  }

  /** Esc while a turn runs: cancels it, as Ctrl-C does, without arming exit. */
  interrupt(): void {
    if (this.store.getState().busy) this.session?.interrupt();
  }

  /** Any key other than Ctrl-C disarms exit. */
  disarm(): void {
    if (this.store.getState().exitArmed) this.store.update({ exitArmed: false });
  }

  async runTurn(prompt: string): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.store.print({ kind: "user", text: prompt });
    this.store.update({ busy: true, liveText: "", running: [] });
    try {
      for await (const event of session.send(prompt)) this.onEvent(event);
    } catch (error) {
      this.flushLiveText();
      this.store.print({ kind: "notice", tone: "error", text: describeTurnError(error) });
    } finally {
      this.flushLiveText();
      this.store.update({ busy: false, running: [], permission: undefined });
      this.refreshStatus();
      void this.refreshTasks();
    }
    await this.#runQueued();
  }

  /**
   * Runs the oldest prompt typed while the session was busy (a turn, or a command such as `/compact`), and through
   * it the rest in order: a prompt typed during a compaction lands after it, never waits for a later prompt.
   */
  async #runQueued(): Promise<void> {
    if (this.store.getState().busy) return;
    const [next, ...rest] = this.store.getState().queued;
    if (next === undefined) return;
    this.store.update({ queued: rest });
    await this.runTurn(next);
  }

  onEvent(event: SessionEvent): void {
    switch (event.type) {
      case "text-delta":
        this.store.update((state) => ({ liveText: state.liveText + event.text }));
        break;
      case "message":
        if (event.message.role === "assistant") {
          const text = event.message.content
            .flatMap((block) => (block.type === "text" ? [block.text] : []))
            .join("\n\n")
            .trim();
          this.store.update({ liveText: "" });
          if (text !== "") this.store.print({ kind: "assistant", markdown: text });
        }
        break;
      case "tool-start":
        this.store.update((state) => ({
          running: [...state.running, { id: event.toolUseId, title: describeCall(event.name, event.input) }],
        }));
        break;
      case "tool-end":
        this.#onToolEnd(event);
        break;
      case "model-request":
      case "model-response":
        this.refreshStatus();
        break;
      case "context": {
        const text = describeContextEvent(event.event);
        if (text) this.store.print({ kind: "compaction", text });
        this.refreshStatus();
        break;
      }
      case "retry":
        this.store.print({
          kind: "compaction",
          text: "The provider said the prompt was too long: compacted and sent again",
        });
        break;
      case "task-notification":
        this.#onTaskNotification(event);
        break;
      case "prompt-blocked":
        this.store.print({
          kind: "notice",
          tone: "warning",
          text: `Prompt blocked${event.by ? ` by ${event.by}` : ""}: ${event.reason}`,
        });
        break;
      case "hook-error":
        this.store.print({ kind: "notice", tone: "warning", text: event.message });
        break;
      case "mcp":
        if (event.event.type === "mcp-server-failed") {
          this.#mcpReported.add(event.event.server);
          this.store.print({
            kind: "notice",
            tone: "warning",
            text: `${describeMcpFailure(event.event.error)} /mcp reconnect ${event.event.server} tries again.`,
          });
        }
        break;
      case "turn-end":
        if (event.stopReason === "aborted")
          this.store.print({ kind: "notice", tone: "info", text: "Interrupted." });
        else if (event.stopReason === "max_turns")
          this.store.print({
            kind: "notice",
            tone: "info",
            text: "Stopped at the turn limit; send another prompt to go on.",
          });
        else if (event.stopReason === "compacted")
          this.store.print({
            kind: "notice",
            tone: "info",
            text: "Paused after compacting (compaction.pauseAfterAuto): /context summary shows what the model now reads. Type to go on, or say what to change.",
          });
        break;
    }
  }

  /** A call ended: off the running list, and its result drawn. */
  #onToolEnd(event: Extract<SessionEvent, { type: "tool-end" }>): void {
    const running = this.store.getState().running.find((call) => call.id === event.toolUseId);
    const input = this.#inputOf(event.toolUseId);
    this.store.update((state) => ({
      running: state.running.filter((call) => call.id !== event.toolUseId),
    }));
    this.store.print(
      toolItem(
        running?.title ?? describeCall(event.name, input),
        event.status,
        event.status === "completed" && !event.output.isError,
        input,
        event.output.content,
      ),
    );
  }

  /** Background tasks changed: what is new is drawn, and the task list refreshed. */
  #onTaskNotification(event: Extract<SessionEvent, { type: "task-notification" }>): void {
    // An end drawn already when it happened is not drawn again; the model reads it now either way.
    const fresh = event.notifications.filter(
      (notification) =>
        !(
          (notification.kind === "finished" || notification.kind === "failed") &&
          this.#endedTasks.has(notification.taskId)
        ),
    );
    if (fresh.length > 0)
      this.store.print({
        kind: "notice",
        tone: "info",
        text: fresh
          .map(
            (notification) =>
              `Task ${notification.taskId} (${notification.description}): ${notification.kind}`,
          )
          .join("\n"),
      });
    void this.refreshTasks();
  }

  /** The gauge: read from the session (cheap) whenever something may have moved it. */
  refreshStatus(): void {
    const session = this.session;
    const environment = this.environment;
    if (!session || !environment) return;
    const status = session.status();
    this.store.update((state) => ({
      status: {
        model: status.model,
        provider: environment.providerName,
        tokens: status.tokens,
        threshold: status.threshold,
        turnsUntilCompaction: status.turnsUntilCompaction,
        runningTasks: state.status?.runningTasks ?? 0,
        mode: session.permissions?.mode() ?? "default",
      },
    }));
  }

  /**
   * Reads the tasks (every few seconds, and after each turn): the count of running ones for the status line,
   * and a line for each task of this run that has ended since the last look, drawn when it is seen, not with
   * the next prompt.
   */
  async refreshTasks(): Promise<void> {
    const tasks = this.environment?.tasks;
    if (!tasks) return;
    const list = await tasks.list().catch(() => undefined);
    if (!list) return;
    for (const task of list) {
      if (task.status === "running") {
        this.#runningTasks.add(task.id);
        continue;
      }
      const ours = this.#runningTasks.delete(task.id) || task.createdAt >= this.#startedAt;
      if (!ours || this.#endedTasks.has(task.id) || this.store.getState().phase !== "ready") continue;
      this.#endedTasks.add(task.id);
      this.store.print({
        kind: "notice",
        tone: task.status === "completed" ? "info" : "warning",
        text: describeEnd(task),
      });
    }
    const running = list.filter((task) => task.status === "running").length;
    const status = this.store.getState().status;
    if (status && status.runningTasks !== running)
      this.store.update({ status: { ...status, runningTasks: running } });
  }

  /**
   * One line per MCP server once every server has connected or failed (the REPL starts before they have),
   * so that a server whose command does not exist is reported even when no prompt runs.
   */
  async reportMcp(options: { failuresOnly?: boolean } = {}): Promise<void> {
    const servers = this.session?.mcpServers;
    if (!servers) return;
    const statuses = await servers.ready();
    for (const status of statuses) {
      if (this.#mcpReported.has(status.server)) continue;
      if (options.failuresOnly && status.state !== "failed") continue;
      this.#mcpReported.add(status.server);
      this.store.print({
        kind: "notice",
        tone: status.state === "failed" ? "warning" : "info",
        text:
          status.state === "failed"
            ? `${describeMcpOutcome(status)} /mcp reconnect ${status.server} tries again.`
            : describeMcpOutcome(status),
      });
    }
  }

  async runCommand(line: string): Promise<void> {
    const [word = "", ...rest] = line.slice(1).split(/\s+/);
    const args = rest.join(" ").trim();
    const command = findCommand(word);
    if (!command) {
      const suggestion = suggestCommand(word);
      this.store.print({
        kind: "notice",
        tone: "warning",
        text: `Unknown command /${word}.${suggestion ? ` Did you mean /${suggestion}?` : ""} /help lists the commands.`,
      });
      return;
    }
    if (command.whileIdle && this.store.getState().busy) {
      this.store.print({
        kind: "notice",
        tone: "warning",
        text: `/${command.name} waits for the running turn: press Esc to stop it first.`,
      });
      return;
    }
    try {
      await command.run(this, args);
    } catch (error) {
      this.store.print({ kind: "notice", tone: "error", text: `/${command.name}: ${describe(error)}` });
    }
    this.refreshStatus();
    await this.#runQueued();
  }

  /** Draws the last turns of the session (after `--resume`, `--continue` or `/resume`): the context is theirs. */
  drawConversation(): void {
    for (const item of drawConversation(this.session?.messages ?? [])) this.store.print(item);
  }

  /**
   * Replaces the session (a `/resume`), closing the current one. What this run allowed carries over, as it does
   * across a `/clear`: the permission mode, the rules added for the session and the folders added.
   */
  async switchSession(resume: string): Promise<void> {
    const environment = this.environment;
    if (!environment) return;
    const previous = this.session?.permissions;
    const carried = previous && {
      mode: previous.mode(),
      rules: previous.rules().filter((rule) => rule.source.name === "session"),
      directories: previous.directories(),
    };
    await this.session?.close("resume");
    this.session = await environment.openSession({ resume });
    const gate = this.session.permissions;
    if (carried && gate) {
      gate.setMode(carried.mode);
      gate.update([
        ...carried.rules.map((rule) => ({
          type: "addRules" as const,
          behavior: rule.behavior,
          rules: [rule.text],
        })),
        { type: "addDirectories", directories: carried.directories },
      ]);
    }
    // The new session starts its MCP servers again: a failure is reported again, a success quietly.
    this.#mcpReported.clear();
    void this.reportMcp({ failuresOnly: true });
    this.refreshStatus();
  }

  async exit(): Promise<void> {
    if (this.store.getState().phase === "exiting") return;
    this.store.update({ phase: "exiting", permission: undefined });
    if (this.#tasksTimer) clearInterval(this.#tasksTimer);
    try {
      await this.session?.close("prompt_input_exit");
      await this.environment?.close();
    } finally {
      this.#onExit();
    }
  }

  #inputOf(toolUseId: string): Record<string, unknown> {
    for (const message of [...(this.session?.messages ?? [])].reverse()) {
      for (const block of message.content)
        if (block.type === "tool_use" && block.id === toolUseId)
          return block.input as Record<string, unknown>;
    }
    return {};
  }

  flushLiveText(): void {
    const text = this.store.getState().liveText.trim();
    if (text !== "") this.store.print({ kind: "assistant", markdown: text });
    this.store.update({ liveText: "" });
  }

  static commandNames(): string[] {
    return SLASH_COMMANDS.map((command) => command.name);
  }
}

/** `Task bash-k3j4 (npm test) completed, exit code 0 · /tasks output bash-k3j4`. */
function describeEnd(task: TaskInfo): string {
  const how =
    task.exitCode !== undefined
      ? `exit code ${task.exitCode}`
      : task.signal
        ? `signal ${task.signal}`
        : (task.endReason ?? "");
  return `Task ${task.id} (${task.description}) ${task.status}${how ? `, ${how}` : ""} · /tasks output ${task.id}`;
}

/** Why a turn failed; for a failure the provider may not repeat (a connection, an overload), what to do next. */
function describeTurnError(error: unknown): string {
  const text = describe(error);
  const retryable = error instanceof ProviderRequestError && error.retryable;
  return retryable ? `${text} Send the prompt again to retry.` : text;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
