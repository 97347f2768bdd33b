import type { ContentBlock, Message, Usage } from "@unforget/core";
import type { AgentSession, SessionEvent, SessionMcpServerStatus, TurnResult } from "@unforget/session";
import type { AgentEnvironment } from "./agent-environment.ts";
import { describeMcpOutcome } from "./mcp-outcome.ts";
import { describeSummaryWriter } from "./summary-writer.ts";
import { modelUsageOf, totalCostUsd } from "./usage-meter.ts";

/** `--output-format`: Claude Code's names. */
export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Exit codes of the agent, documented in the README. */
export const EXIT_CODES = Object.freeze({
  /** The model finished its turn. */
  success: 0,
  /** It failed: no provider, bad settings, a provider error, a context that could not be made to fit, a blocked prompt. */
  failure: 1,
  /** The command line is wrong (unknown option, no prompt, `--resume` of an unknown session). */
  usage: 2,
  /** `--max-turns` model calls were made before the model finished. */
  maxTurns: 3,
  /** Interrupted (Ctrl-C, SIGINT, SIGTERM): the transcript is valid and `--resume` continues it. */
  interrupted: 130,
});

interface Writer {
  write(text: string): unknown;
}

/** Claude Code's `usage` object. */
function wireUsage(usage: Usage | undefined) {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    cache_creation_input_tokens: usage?.cacheCreationInputTokens ?? 0,
    cache_read_input_tokens: usage?.cacheReadInputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
  };
}

/** Blocks as the Messages API writes them (cache markers are the request's business, not the message's). */
function wireContent(content: readonly ContentBlock[]): unknown[] {
  return content.map((block) => {
    const { cache_control: _cache, ...rest } = block as ContentBlock & { cache_control?: unknown };
    return rest;
  });
}

/** A `stream-json` line for a message of the conversation, or undefined for what Claude Code does not print. */
export function streamJsonMessage(message: Message, sessionId: string): Record<string, unknown> | undefined {
  if (message.role === "assistant") {
    return {
      type: "assistant",
      message: {
        id: message.responseId ?? message.id,
        type: "message",
        role: "assistant",
        model: message.model ?? null,
        content: wireContent(message.content),
        stop_reason: message.stopReason ?? null,
        usage: wireUsage(message.usage),
      },
      parent_tool_use_id: null,
      session_id: sessionId,
    };
  }
  if (message.content.some((block) => block.type === "tool_result")) {
    return {
      type: "user",
      message: { role: "user", content: wireContent(message.content) },
      parent_tool_use_id: null,
      session_id: sessionId,
    };
  }
  return undefined;
}

/** How the turn ended, for the result line and the exit code. */
export interface PrintOutcome {
  result: TurnResult | undefined;
  error: unknown;
  durationMs: number;
  apiDurationMs: number;
  denials: { tool_name: string; tool_use_id: string; tool_input: Record<string, unknown> }[];
  interrupted: boolean;
}

/** Claude Code's result object (`--output-format json`, and the last line of `stream-json`). */
export function resultObject(
  outcome: PrintOutcome,
  session: AgentSession,
  byModel: ReadonlyMap<string, Usage>,
): Record<string, unknown> {
  const { result } = outcome;
  const maxTurns = result?.stopReason === "max_turns";
  const failed = outcome.error !== undefined || result?.stopReason === "blocked";
  const usage = result?.usage;
  return {
    type: "result",
    subtype: maxTurns
      ? "error_max_turns"
      : failed || outcome.interrupted
        ? "error_during_execution"
        : "success",
    is_error: maxTurns || failed || outcome.interrupted,
    duration_ms: Math.round(outcome.durationMs),
    duration_api_ms: Math.round(outcome.apiDurationMs),
    num_turns: result?.turns ?? 0,
    result: outcome.error === undefined ? (result?.text ?? "") : describeError(outcome.error),
    stop_reason: result?.stopReason ?? null,
    session_id: session.sessionId,
    // Every call of the run at its own model's price: the turn's, and the summaries, notes and memory extraction
    // its compactions made (on the summariser model when there is one).
    total_cost_usd: totalCostUsd(byModel),
    usage: wireUsage(usage),
    modelUsage: modelUsageOf(byModel),
    permission_denials: outcome.denials,
  };
}

export function exitCodeOf(outcome: PrintOutcome): number {
  if (outcome.interrupted) return EXIT_CODES.interrupted;
  if (outcome.error !== undefined || outcome.result?.stopReason === "blocked") return EXIT_CODES.failure;
  if (outcome.result?.stopReason === "max_turns") return EXIT_CODES.maxTurns;
  return EXIT_CODES.success;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs one prompt without a terminal UI and prints it as `format` says: `text` prints the final answer, `json`
 * one result object, `stream-json` one JSON object per line (an `init` system message, each assistant and
 * tool-result message, then the result). Resolves to the exit code.
 */
export async function runPrintMode(
  environment: AgentEnvironment,
  session: AgentSession,
  prompt: string,
  options: PrintOptions,
): Promise<number> {
  const { stdout, format } = options;
  const started = performance.now();
  const run: PrintRun = {
    outcome: {
      result: undefined,
      error: undefined,
      durationMs: 0,
      apiDurationMs: 0,
      denials: [],
      interrupted: false,
    },
    inputs: new Map(),
    apiStarted: undefined,
  };
  const { outcome } = run;
  await reportMcpServers(environment, session, options);
  try {
    const turn = session.send(prompt, { signal: options.signal });
    for await (const event of turn) handlePrintEvent(run, event, session, options);
    outcome.result = await turn.result();
    outcome.interrupted = outcome.result.stopReason === "aborted";
  } catch (error) {
    outcome.error = error;
  }
  if (!options.waitForMcp) reportMcpOutcomes(session.mcpServers?.status() ?? [], options);
  outcome.durationMs = performance.now() - started;
  if (format === "text") writeTextOutcome(outcome, session, options);
  else writeJsonLine(stdout, resultObject(outcome, session, environment.usageByModel()));
  return exitCodeOf(outcome);
}

/** How `runPrintMode` writes: the output format, verbosity, the two streams and the signal that interrupts. */
interface PrintOptions {
  format: OutputFormat;
  verbose: boolean;
  /** Whether the first request waited for the MCP servers (false with `--mcp-nonblocking`). */
  waitForMcp: boolean;
  stdout: Writer;
  stderr: Writer;
  signal: AbortSignal;
}

/** What one print-mode run gathers while its events arrive. */
interface PrintRun {
  outcome: PrintOutcome;
  /** Each tool call's input by its id, for the denials of the result object. */
  inputs: Map<string, Record<string, unknown>>;
  /** When the model request in flight started, for the API duration. */
  apiStarted: number | undefined;
}

/** Writes one value as a line of JSON. */
function writeJsonLine(stdout: Writer, value: unknown): void {
  stdout.write(`${JSON.stringify(value)}\n`);
}

/** Says on stderr how each MCP server that did not connect stands (all of them with `--verbose`). */
function reportMcpOutcomes(servers: readonly SessionMcpServerStatus[], options: PrintOptions): void {
  for (const server of servers)
    if (server.state !== "connected" || options.verbose)
      options.stderr.write(`unforget: ${describeMcpOutcome(server)}\n`);
}

/**
 * Waits for the MCP servers (unless the first request does not), says on stderr how each one that did not
 * connect ended, and in stream-json writes the init line. Without waiting, the init line lists each server as
 * it stands ("connecting" for one that has not yet), and stderr says after the turn how each one ended.
 */
async function reportMcpServers(
  environment: AgentEnvironment,
  session: AgentSession,
  options: PrintOptions,
): Promise<void> {
  const { format } = options;
  // The servers are settled before the first request anyway: waiting here costs nothing, and the init line
  // and stderr say how each one ended (a command that does not exist is "failed", not "connecting").
  const servers = options.waitForMcp
    ? ((await session.mcpServers?.ready()) ?? [])
    : (session.mcpServers?.status() ?? []);
  if (options.waitForMcp) reportMcpOutcomes(servers, options);
  if (format === "stream-json") {
    writeJsonLine(options.stdout, {
      type: "system",
      subtype: "init",
      cwd: environment.projectDir,
      session_id: session.sessionId,
      tools: session.tools.map((tool) => tool.name),
      mcp_servers: servers.map((server) => ({
        name: server.server,
        status: server.state,
        ...(server.error ? { error: server.error.message } : {}),
      })),
      model: session.model,
      permissionMode: session.permissions?.mode() ?? "default",
      provider: environment.providerName,
    });
  }
}

/** Takes one session event in: timing, stream-json messages, denials, and what stderr reports. */
function handlePrintEvent(
  run: PrintRun,
  event: SessionEvent,
  session: AgentSession,
  options: PrintOptions,
): void {
  const { stderr, format, stdout } = options;
  switch (event.type) {
    case "model-request":
      run.apiStarted = performance.now();
      break;
    case "model-response":
      if (run.apiStarted !== undefined) run.outcome.apiDurationMs += performance.now() - run.apiStarted;
      run.apiStarted = undefined;
      break;
    case "message":
      if (format === "stream-json") {
        const wire = streamJsonMessage(event.message, session.sessionId);
        if (wire) writeJsonLine(stdout, wire);
      }
      for (const block of event.message.content)
        if (block.type === "tool_use") run.inputs.set(block.id, block.input as Record<string, unknown>);
      break;
    case "permission-decision":
      if (event.behavior === "deny")
        run.outcome.denials.push({
          tool_name: event.name,
          tool_use_id: event.toolUseId,
          tool_input: run.inputs.get(event.toolUseId) ?? {},
        });
      break;
    case "prompt-blocked":
      stderr.write(`unforget: the prompt was blocked${event.by ? ` by ${event.by}` : ""}: ${event.reason}\n`);
      break;
    case "hook-error":
      stderr.write(`unforget: ${event.message}\n`);
      break;
    case "context":
      if (event.event.type === "pins-unhonoured")
        stderr.write(
          `unforget: pinned ${event.event.messageIds.join(", ")} no longer fit the pins' cap (${event.event.capTokens} tokens): they are compacted like any message\n`,
        );
      if (options.verbose && event.event.type === "layer")
        stderr.write(
          `unforget: ${event.event.layer} freed ${event.event.tokensFreed} tokens (${event.event.tokensBefore} → ${event.event.tokensAfter})${describeSummaryWriter(event.event)}\n`,
        );
      break;
    case "tool-end":
      if (options.verbose) stderr.write(`unforget: ${event.name} ${event.status}\n`);
      break;
  }
}

/** The text format's output: the answer on stdout, an error or the max-turns note on stderr. */
function writeTextOutcome(outcome: PrintOutcome, session: AgentSession, options: PrintOptions): void {
  const { stdout, stderr } = options;
  if (outcome.error !== undefined) {
    stderr.write(`unforget: ${describeError(outcome.error)}\n`);
    return;
  }
  const text = outcome.result?.text ?? "";
  if (text !== "") stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  if (outcome.result?.stopReason === "max_turns")
    stderr.write(
      `unforget: stopped after --max-turns ${outcome.result.turns} model calls; unforget --resume ${session.sessionId} goes on.\n`,
    );
}
