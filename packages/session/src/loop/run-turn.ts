import { ContextOverflowError, type PrepareResult } from "@unforget/compact";
import {
  type ContentBlock,
  createMessage,
  createUsage,
  getMessageText,
  getToolUses,
  type Message,
  type ModelResponse,
  PromptTooLongError,
  type Usage,
  usageContextTokens,
} from "@unforget/core";
import { PROMPT_BLOCK_ATTACHMENT_KIND } from "@unforget/hooks";
import { readStateChanges } from "@unforget/tools";
import type { SessionSpan } from "../telemetry/session-tracer.ts";
import { runToolCalls } from "../tools/tool-runner.ts";
import type { TurnStopReason } from "./session-events.ts";
import { INTERRUPTED_FOR_TOOL_USE_TEXT, INTERRUPTED_TEXT, type SessionRuntime } from "./session-runtime.ts";
import { type StreamOutcome, streamResponse } from "./stream-response.ts";
import { trimSessionConversation } from "./trim-conversation.ts";

/**
 * How many responses in a row may hit the output limit inside a tool call before the turn gives up: each one
 * is told, and usually splits its call; one that cannot is not retried forever.
 */
export const MAX_TRUNCATED_TOOL_CALLS = 3;

/** How a turn (one `send`) ended. */
export interface TurnResult {
  stopReason: TurnStopReason;
  /** Model calls made in the turn. */
  turns: number;
  /** Summed usage of the turn's model calls. */
  usage: Usage;
  /** The text of the turn's last assistant message ("" when there was none). */
  text: string;
  /** The messages this turn appended, in order. */
  messages: Message[];
}

/**
 * One turn: UserPromptSubmit, then model calls until the model ends its turn, `maxTurns` is reached or the
 * signal aborts. Each call: task notifications in, `prepare`, stream, append the response, run its tool uses,
 * append their results. A prompt-too-long refusal is recovered once. Rejects only with typed errors (a provider
 * failure, a second overflow, a transcript that cannot be written); the conversation is valid whatever happens.
 */
export async function runTurn(
  runtime: SessionRuntime,
  prompt: string | ContentBlock[],
  control: { signal: AbortSignal; maxTurns?: number },
): Promise<TurnResult> {
  const { signal } = control;
  const turnMessages: Message[] = [];
  runtime.turnMessages = turnMessages;
  const usage = createUsage();
  let turns = 0;
  let truncations = 0;
  const end = (stopReason: TurnStopReason): TurnResult => {
    if (runtime.turnMessages === turnMessages) runtime.turnMessages = undefined;
    const lastAssistant = turnMessages.findLast((message) => message.role === "assistant");
    const result: TurnResult = {
      stopReason,
      turns,
      usage,
      text: lastAssistant ? getMessageText(lastAssistant) : "",
      messages: turnMessages,
    };
    runtime.emit({ type: "turn-end", stopReason, turns, usage, text: result.text });
    return result;
  };

  await runtime.beginTurn();
  const promptText = typeof prompt === "string" ? prompt : getMessageText({ content: prompt });
  const submitted = await runtime.hooks.userPromptSubmit.promise([], {
    sessionId: runtime.sessionId,
    transcriptId: runtime.transcript.path,
    prompt: promptText,
  });
  const block = submitted.find((attachment) => attachment.kind === PROMPT_BLOCK_ATTACHMENT_KIND);
  if (block) {
    const reason =
      typeof block.content === "string" ? block.content : getMessageText({ content: block.content });
    runtime.emit({ type: "prompt-blocked", reason, ...(block.source ? { by: block.source } : {}) });
    return end("blocked");
  }
  await runtime.append(createMessage("user", prompt));
  await runtime.appendAttachments(submitted);

  for (;;) {
    if (signal.aborted) return end("aborted");
    await runtime.deliverTaskNotifications();
    if (control.maxTurns !== undefined && turns >= control.maxTurns) return end("max_turns");
    const outcome = await callModel(runtime, turns + 1, signal);
    if (outcome.kind !== "paused") turns++; // a paused call was not sent
    if (outcome.kind !== "complete") {
      if (outcome.kind === "aborted") await keepPartial(runtime, outcome.response, signal);
      return end(outcome.kind === "paused" ? "compacted" : "aborted");
    }
    const response = outcome.response;
    addUsage(usage, response.usage);
    runtime.emit({
      type: "model-response",
      turn: turns,
      responseId: response.id,
      stopReason: response.stopReason,
      usage: response.usage,
    });
    runtime.emit({ type: "usage", turn: turns, usage: response.usage, total: { ...usage } });
    // An empty response cannot go back into history (providers refuse empty messages): the turn just ends.
    if (response.content.length === 0) return end(response.stopReason);
    const assistant = createMessage("assistant", response.content, {
      responseId: response.id,
      usage: response.usage,
      model: response.model || runtime.model,
      stopReason: response.stopReason,
    });
    await runtime.append(assistant);
    const uses = getToolUses(assistant);
    await runtime.hooks.postSampling.promise({
      sessionId: runtime.sessionId,
      transcriptId: runtime.transcript.path,
      messageId: assistant.id,
      contextTokens: usageContextTokens(response.usage),
      toolCalls: uses.length,
    });
    if (uses.length === 0) {
      if (response.stopReason === "pause_turn") continue;
      return end(response.stopReason);
    }
    const lastBlock = response.content.at(-1);
    const truncatedId =
      response.stopReason === "max_tokens" && lastBlock?.type === "tool_use" ? lastBlock.id : undefined;
    const results = await runToolCalls(uses, runtime.toolContext(), {
      signal,
      ...(truncatedId ? { truncatedId } : {}),
      ...(runtime.turnSpan ? { parentSpan: runtime.turnSpan } : {}),
    });
    await runtime.append(toolResultsMessage(runtime, results));
    if (signal.aborted) {
      await runtime.append(createMessage("user", INTERRUPTED_FOR_TOOL_USE_TEXT, { isMeta: true }));
      return end("aborted");
    }
    truncations = truncatedId ? truncations + 1 : 0;
    if (truncations >= MAX_TRUNCATED_TOOL_CALLS) return end("max_tokens");
  }
}

/**
 * Prepares the context and streams one call. A prompt-too-long refusal (before or during the stream) is
 * recovered once by reactive compaction and the call sent again; a second refusal is a `ContextOverflowError`.
 */
async function callModel(
  runtime: SessionRuntime,
  turn: number,
  signal: AbortSignal,
): Promise<StreamOutcome | { kind: "paused" }> {
  runtime.refreshTools();
  const prepareOptions = runtime.prepareOptions(signal);
  // Read only when it may pause: `status()` is not free, and this runs before every call.
  const compactions = runtime.options.pauseAfterCompaction ? runtime.manager.status().compactions : 0;
  let prepared: PrepareResult = await runtime.manager.prepare(runtime.conversation, prepareOptions);
  trimSessionConversation(runtime);
  // Mid-turn (the model was working through tool calls), a summary just replaced what it was looking at.
  if (runtime.options.pauseAfterCompaction && turn > 1 && prepared.status.compactions > compactions) {
    runtime.lastPrepared = prepared; // what `/context` shows: the context the summary left, not the last sent
    return { kind: "paused" };
  }
  let recovered: { tokensBefore: number } | undefined;
  for (;;) {
    runtime.lastPrepared = prepared;
    const request = runtime.request(prepared);
    runtime.emit({
      type: "model-request",
      turn,
      model: runtime.model,
      tokens: prepared.tokens,
      threshold: prepared.status.threshold,
    });
    const span = startSpan(runtime, turn, request.maxTokens);
    try {
      const outcome = await streamResponse(runtime.options.provider, request, {
        signal,
        turn,
        emit: runtime.emit,
      });
      endSpan(
        span,
        outcome.response
          ? {
              usage: outcome.response.usage,
              stopReason: outcome.kind === "aborted" ? "aborted" : outcome.response.stopReason,
              responseId: outcome.response.id,
            }
          : { stopReason: "aborted" },
      );
      return outcome;
    } catch (error) {
      endSpan(span, { error, isError: true });
      if (!(error instanceof PromptTooLongError) || signal.aborted) throw error;
      if (recovered) {
        throw new ContextOverflowError(
          prepared.tokens,
          error.limitTokens ?? prepared.status.contextWindow,
          `The provider refused the request as too long${limitText(error)} even after reactive compaction took the context from ${recovered.tokensBefore} to ${prepared.tokens} estimated tokens and the call was sent again. Nothing was lost: the transcript ${runtime.transcript.path} holds the whole conversation. Compact with instructions to keep less (session.compact()), or switch to a model with a larger window (session.setModel()).`,
          { tokensBefore: recovered.tokensBefore, cause: error },
        );
      }
      recovered = { tokensBefore: prepared.tokens };
      // Rejects with compact's ContextOverflowError when nothing is left to remove (the transcript is untouched).
      prepared = await runtime.manager.recover(error, prepareOptions);
      trimSessionConversation(runtime);
      runtime.emit({
        type: "retry",
        turn,
        reason: "prompt-too-long",
        tokensBefore: recovered.tokensBefore,
        tokensAfter: prepared.tokens,
      });
    }
  }
}

/**
 * After an abort mid-stream: the text that arrived is kept as the assistant's message, every tool use in it is
 * answered "interrupted", and a note says the user cut the turn short.
 */
async function keepPartial(
  runtime: SessionRuntime,
  response: ModelResponse | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (response && response.content.length > 0) {
    const message = createMessage("assistant", response.content, {
      responseId: response.id,
      usage: response.usage,
      model: response.model || runtime.model,
    });
    await runtime.append(message);
    const uses = getToolUses(message);
    if (uses.length > 0) {
      const results = await runToolCalls(uses, runtime.toolContext(), { signal });
      await runtime.append(toolResultsMessage(runtime, results));
    }
  }
  await runtime.append(createMessage("user", INTERRUPTED_TEXT, { isMeta: true }));
}

/** The message that answers a batch of tool calls, with what the calls read written into its metadata. */
function toolResultsMessage(runtime: SessionRuntime, results: Parameters<typeof createMessage>[1]): Message {
  const metadata = readStateChanges(runtime.toolState);
  return createMessage("user", results, metadata === undefined ? {} : { metadata });
}

function addUsage(total: Usage, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheCreationInputTokens += usage.cacheCreationInputTokens;
  total.cacheReadInputTokens += usage.cacheReadInputTokens;
}

function limitText(error: PromptTooLongError): string {
  return error.actualTokens !== undefined && error.limitTokens !== undefined
    ? ` (${error.actualTokens} tokens > ${error.limitTokens})`
    : "";
}

function startSpan(runtime: SessionRuntime, turn: number, maxTokens: number): SessionSpan {
  try {
    return runtime.tracer.startSpan(
      {
        kind: "model-call",
        sessionId: runtime.sessionId,
        model: runtime.model,
        providerId: runtime.options.provider.providerId,
        maxTokens,
        turn,
      },
      runtime.turnSpan,
    );
  } catch {
    return { end() {} };
  }
}

function endSpan(span: SessionSpan, outcome: Parameters<SessionSpan["end"]>[0]): void {
  try {
    span.end(outcome);
  } catch {
    // A tracer that throws must not break the loop.
  }
}
