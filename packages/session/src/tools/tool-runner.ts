import {
  type Tool,
  type ToolOutput,
  type ToolResultBlock,
  type ToolResultContentBlock,
  type ToolSessionState,
  type ToolUseBlock,
  toolOutputText,
} from "@unforget/core";
import type { SessionHooks } from "@unforget/hooks";
import { errorText } from "../loop/session-errors.ts";
import type { SessionEvent, ToolCallStatus } from "../loop/session-events.ts";
import type { SessionSpan, SessionTracer } from "../telemetry/session-tracer.ts";
import type { ToolCallAuthorizer } from "./tool-authorization.ts";
import type { ToolInputValidator } from "./tool-input-validator.ts";

/** Most calls of one turn that run at the same time (Claude Code's default too). */
export const DEFAULT_MAX_TOOL_CONCURRENCY = 10;
/** A call's timeout when its tool sets none: ten minutes, the longest a Bash command may run. */
export const DEFAULT_TOOL_TIMEOUT_MS = 600_000;
/**
 * After an abort or a timeout, how long a tool may take to stop and answer (a killed command's partial
 * output is worth waiting for); after that the call is answered without it.
 */
export const TOOL_STOP_GRACE_MS = 2_000;

/** What the runner needs from the session; read on every call, so tools may change between turns. */
export interface ToolRunnerContext {
  /** The session's tools by name, as offered in the current request. */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly hooks: SessionHooks;
  readonly authorize: ToolCallAuthorizer;
  readonly validator: ToolInputValidator;
  readonly sessionId: string;
  readonly transcriptPath: string;
  readonly cwd: string;
  readonly sessionState: ToolSessionState;
  readonly defaultTimeoutMs: number;
  readonly maxConcurrency: number;
  readonly tracer: SessionTracer;
  readonly emit: (event: SessionEvent) => void;
  /** Called right before a checked call runs (the session grants the tools the folders the gate allows now). */
  readonly beforeExecute: () => void;
}

/** One call the runner answers. */
interface Call {
  use: ToolUseBlock;
  /** Set once the call is answered without running (or after it ran). */
  outcome?: { status: ToolCallStatus; output: ToolOutput; durationMs: number };
  /** Set when the call passed every check. */
  ready?: { tool: Tool; input: Record<string, unknown> };
}

/**
 * Answers every tool use of one assistant message, in order: checks (known tool, schema, PreToolUse, permission)
 * one call at a time, then runs consecutive concurrency-safe calls together and the others one by one.
 * Resolves with exactly one tool_result per tool use, in the order of the uses, whatever happens (a throwing
 * or hanging tool, a denial, an abort); never rejects.
 */
export async function runToolCalls(
  uses: readonly ToolUseBlock[],
  context: ToolRunnerContext,
  options: { signal: AbortSignal; truncatedId?: string; parentSpan?: SessionSpan },
): Promise<ToolResultBlock[]> {
  const calls: Call[] = uses.map((use) => ({ use }));
  for (const batch of batches(calls, context.tools, context.maxConcurrency)) {
    for (const call of batch) {
      if (options.signal.aborted) {
        settle(call, context, "interrupted", interruptedText(call.use.name));
        continue;
      }
      if (call.use.id === options.truncatedId) {
        settle(
          call,
          context,
          "truncated",
          `Your response hit the output token limit while writing this ${call.use.name} call, so its input is incomplete and it was not run. Call it again with a shorter input (split a long file into a Write and then Edits).`,
        );
        continue;
      }
      await check(call, context, options.signal);
    }
    await Promise.all(
      batch.filter((call) => call.ready !== undefined).map((call) => execute(call, context, options)),
    );
  }
  return calls.map((call) => {
    if (call.outcome === undefined) settle(call, context, "interrupted", interruptedText(call.use.name));
    return toolResult(call.use.id, call.outcome!.output);
  });
}

/** Consecutive calls of concurrency-safe tools form one batch (at most `maxConcurrency`); any other call is alone. */
function batches(calls: Call[], tools: ReadonlyMap<string, Tool>, maxConcurrency: number): Call[][] {
  const result: Call[][] = [];
  let current: Call[] = [];
  for (const call of calls) {
    const safe = tools.get(call.use.name)?.concurrencySafe === true;
    if (safe && current.length < maxConcurrency) {
      current.push(call);
      continue;
    }
    if (current.length > 0) result.push(current);
    current = [];
    if (safe) current.push(call);
    else result.push([call]);
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** Known tool, schema, PreToolUse, permission: sets `ready`, or answers the call with why it cannot run. */
async function check(call: Call, context: ToolRunnerContext, signal: AbortSignal): Promise<void> {
  const { use } = call;
  const tool = context.tools.get(use.name);
  if (!tool) {
    const names = [...context.tools.keys()];
    settle(
      call,
      context,
      "unknown-tool",
      names.length === 0
        ? `There is no tool named ${use.name}, and this session has no tools: answer without calling one.`
        : `There is no tool named ${use.name}. The tools you can call are: ${names.join(", ")}.`,
    );
    return;
  }
  const first = await context.validator.check(tool, use.input);
  if (!first.ok) {
    settle(call, context, "invalid-input", first.problem);
    return;
  }
  let input = first.input;
  const decision = await context.hooks.preToolUse.promise({
    sessionId: context.sessionId,
    transcriptId: context.transcriptPath,
    toolName: tool.name,
    toolUseId: use.id,
    input,
  });
  if (decision?.behavior === "deny") {
    deny(
      call,
      context,
      `A PreToolUse hook (${decision.by ?? "a plugin"}) denied this call: ${decision.reason}`,
      decision.by,
    );
    return;
  }
  if (decision?.behavior === "rewrite") {
    const rewritten = await context.validator.check(tool, decision.input);
    if (!rewritten.ok) {
      settle(
        call,
        context,
        "invalid-input",
        `A PreToolUse hook rewrote this call's input, and ${lowerFirst(rewritten.problem)}`,
      );
      return;
    }
    input = rewritten.input;
  }
  let permission: Awaited<ReturnType<ToolCallAuthorizer>>;
  try {
    permission = await context.authorize({
      tool,
      input,
      toolUseId: use.id,
      sessionId: context.sessionId,
      cwd: context.cwd,
      signal,
      ...(decision?.behavior === "allow" ? { hookDecision: "allow" as const } : {}),
    });
  } catch (error) {
    permission = {
      behavior: "deny",
      message: `The permission check failed (${errorText(error)}), so the call was not run.`,
      reason: "permission check failed",
    };
  }
  if (signal.aborted) {
    settle(call, context, "interrupted", interruptedText(use.name));
    return;
  }
  if (permission.behavior === "deny") {
    deny(call, context, permission.message, permission.reason);
    return;
  }
  if (permission.input !== undefined) {
    const edited = await context.validator.check(tool, permission.input);
    if (!edited.ok) {
      settle(
        call,
        context,
        "invalid-input",
        `The input as allowed by the permission check is invalid: ${lowerFirst(edited.problem)}`,
      );
      return;
    }
    input = edited.input;
  }
  call.ready = { tool, input };
}

/** The decision first, then the call's one end: what a screen draws once per call. */
function deny(call: Call, context: ToolRunnerContext, message: string, reason: string | undefined): void {
  context.emit({
    type: "permission-decision",
    toolUseId: call.use.id,
    name: call.use.name,
    behavior: "deny",
    ...(reason === undefined ? {} : { reason }),
  });
  settle(call, context, "denied", message);
}

/** Runs one checked call under its timeout and the turn's signal; answers it whatever the tool does. */
async function execute(
  call: Call,
  context: ToolRunnerContext,
  options: { signal: AbortSignal; parentSpan?: SessionSpan },
): Promise<void> {
  const { tool, input } = call.ready!;
  context.beforeExecute();
  const timeoutMs = tool.timeoutMs ?? context.defaultTimeoutMs;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`${tool.name} timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  timer.unref?.();
  const onAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onAbort, { once: true });
  const span = startSpan(
    context,
    { kind: "tool-call", sessionId: context.sessionId, toolName: tool.name, toolUseId: call.use.id },
    options.parentSpan,
  );
  context.emit({ type: "tool-start", toolUseId: call.use.id, name: tool.name, input });
  const started = performance.now();
  let status: ToolCallStatus = "completed";
  let output: ToolOutput;
  try {
    const result = await settleOrGiveUp(
      Promise.resolve().then(() =>
        tool.execute(input, {
          signal: controller.signal,
          sessionId: context.sessionId,
          toolUseId: call.use.id,
          cwd: context.cwd,
          sessionState: context.sessionState,
        }),
      ),
      controller.signal,
    );
    if (result.kind === "gave-up") {
      status = options.signal.aborted ? "interrupted" : "timed-out";
      output = {
        content:
          status === "interrupted"
            ? interruptedText(tool.name)
            : `${tool.name} did not finish within ${timeoutMs} ms and was stopped; its output is lost. Try a smaller piece of work, or run it in the background.`,
        isError: true,
      };
    } else if (result.kind === "rejected") {
      status = "failed";
      output = { content: `${tool.name} failed: ${errorText(result.error)}`, isError: true };
    } else {
      const normalized = normalizeOutput(result.value);
      if (normalized === undefined) {
        status = "failed";
        output = {
          content: `${tool.name} returned something that is not a tool output ({ content, isError }); its result is unknown.`,
          isError: true,
        };
      } else if (options.signal.aborted || timedOut) {
        status = options.signal.aborted ? "interrupted" : "timed-out";
        const what =
          status === "interrupted"
            ? "The user interrupted this call"
            : `The call timed out after ${timeoutMs} ms`;
        output = {
          content: prefixContent(`${what}; what it returned before stopping:\n`, normalized.content),
          isError: true,
        };
      } else {
        output = normalized;
      }
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
  const durationMs = performance.now() - started;
  call.outcome = { status, output, durationMs };
  safely(() => span.end({ isError: output.isError }));
  context.emit({ type: "tool-end", toolUseId: call.use.id, name: tool.name, status, output, durationMs });
  await context.hooks.postToolUse.promise({
    sessionId: context.sessionId,
    transcriptId: context.transcriptPath,
    toolName: tool.name,
    toolUseId: call.use.id,
    input,
    output: toolOutputText(output),
    isError: output.isError,
  });
}

type Settled =
  | { kind: "resolved"; value: unknown }
  | { kind: "rejected"; error: unknown }
  | { kind: "gave-up" };

/** The tool's own answer, or "gave-up" once `TOOL_STOP_GRACE_MS` have passed since the signal aborted. */
function settleOrGiveUp(work: Promise<unknown>, signal: AbortSignal): Promise<Settled> {
  const settled = work.then(
    (value): Settled => ({ kind: "resolved", value }),
    (error: unknown): Settled => ({ kind: "rejected", error }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const gaveUp = new Promise<Settled>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve({ kind: "gave-up" }), TOOL_STOP_GRACE_MS);
      timer.unref?.();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([settled, gaveUp]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
}

/** A `ToolOutput` as the model will read it, or undefined when the value is not one. */
function normalizeOutput(value: unknown): ToolOutput | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { content, isError } = value as { content?: unknown; isError?: unknown };
  const error = isError === true;
  if (typeof content === "string") return { content, isError: error };
  if (!Array.isArray(content)) return undefined;
  const blocks = content.filter(
    (block): block is ToolOutput["content"][number] =>
      typeof block === "object" &&
      block !== null &&
      ((block.type === "text" && typeof block.text === "string") ||
        (block.type === "image" && typeof block.source === "object" && block.source !== null)),
  );
  if (blocks.length !== content.length) return undefined;
  return { content: blocks as Exclude<ToolOutput["content"], string>, isError: error };
}

function toolResult(toolUseId: string, output: ToolOutput): ToolResultBlock {
  const block: ToolResultBlock = {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: resultContent(output),
  };
  if (output.isError) block.is_error = true;
  return block;
}

/** The Messages API refuses empty text: an empty result says so in words. */
function resultContent(output: ToolOutput): string | ToolResultContentBlock[] {
  if (typeof output.content === "string") return output.content === "" ? "(no output)" : output.content;
  const blocks = output.content.filter((block) => block.type !== "text" || block.text !== "");
  return blocks.length === 0 ? "(no output)" : blocks;
}

function prefixContent(prefix: string, content: ToolOutput["content"]): ToolOutput["content"] {
  if (typeof content === "string") return `${prefix}${content}`;
  return [{ type: "text", text: prefix }, ...content];
}

export function interruptedText(name: string): string {
  return `The user interrupted the turn, so this ${name} call did not complete. Do not assume it ran; ask or call it again if it is still needed.`;
}

/** Answers a call that does not run (or no longer runs) with an error result, and says so in the stream. */
function settle(call: Call, context: ToolRunnerContext, status: ToolCallStatus, text: string): void {
  const output: ToolOutput = { content: text, isError: true };
  call.outcome = { status, output, durationMs: 0 };
  context.emit({
    type: "tool-end",
    toolUseId: call.use.id,
    name: call.use.name,
    status,
    output,
    durationMs: 0,
  });
}

function lowerFirst(text: string): string {
  return text.length === 0 ? text : text[0]!.toLowerCase() + text.slice(1);
}

function startSpan(
  context: ToolRunnerContext,
  start: Parameters<SessionTracer["startSpan"]>[0],
  parent: SessionSpan | undefined,
): SessionSpan {
  try {
    return context.tracer.startSpan(start, parent);
  } catch {
    return { end() {} };
  }
}

function safely(run: () => void): void {
  try {
    run();
  } catch {
    // A tracer that throws must not break the loop.
  }
}
