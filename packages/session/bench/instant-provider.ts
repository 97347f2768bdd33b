// A model provider that answers at once from a script, in process: the benches measure the loop, not a model.

import { type ContextManagerOptions, createExtractiveSummarizer } from "@unforget/compact";
import {
  createUsage,
  getModelLimits,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  PROVIDER_SPECIFICATION_VERSION,
  type Tool,
} from "@unforget/core";
import { createModelStream } from "@unforget/provider-runtime";
import type { AgentSessionOptions } from "../src/index.ts";

/** What the provider answers to one request: a tool call (after a note, when `text` is given), or the end of the turn. */
export type InstantReply =
  | { toolCall: { name: string; input: Record<string, unknown> }; text?: string }
  | { text: string };

/** Streams `decide(request)` as a real provider's events would (start, blocks, deltas, stop), with usage. */
export function createInstantProvider(decide: (request: ModelRequest) => InstantReply): ModelProvider {
  let counter = 0;
  // Usage as a provider reports it (a quarter of the characters), measured once per content: a block list by
  // itself, a text by its value. Keyed so, measuring costs the loop under test and a baseline that wraps the
  // same contents in new message objects every call alike (nothing after the first call), as a real provider's
  // counting costs the client nothing. Keyed by the message object, it charged the baseline a serialisation of
  // the whole conversation per call.
  const listSizes = new WeakMap<object, number>();
  const textSizes = new Map<string, number>();
  const sizeOf = (content: ModelRequest["messages"][number]["content"]) => {
    const known = typeof content === "string" ? textSizes.get(content) : listSizes.get(content);
    if (known !== undefined) return known;
    const size = JSON.stringify(content).length;
    if (typeof content === "string") textSizes.set(content, size);
    else listSizes.set(content, size);
    return size;
  };
  const inputTokensOf = (request: Pick<ModelRequest, "messages">) => {
    let characters = 0;
    for (const message of request.messages) characters += message.role.length + sizeOf(message.content);
    return Math.ceil(characters / 4);
  };
  const respond = (request: ModelRequest): ModelResponse => {
    counter++;
    const reply = decide(request);
    const inputTokens = inputTokensOf(request);
    return {
      id: `msg_instant_${counter}`,
      model: request.model,
      role: "assistant",
      content:
        "toolCall" in reply
          ? [
              ...(reply.text === undefined ? [] : [{ type: "text" as const, text: reply.text }]),
              {
                type: "tool_use",
                id: `toolu_instant_${counter}`,
                name: reply.toolCall.name,
                input: reply.toolCall.input,
              },
            ]
          : [{ type: "text", text: reply.text }],
      stopReason: "toolCall" in reply ? "tool_use" : "end_turn",
      usage: createUsage({ inputTokens, outputTokens: 20 }),
    };
  };
  return {
    specificationVersion: PROVIDER_SPECIFICATION_VERSION,
    providerId: "instant",
    capabilities: {
      nativeTokenCounting: false,
      nativeContextManagement: false,
      promptCaching: false,
      thinking: false,
    },
    async createMessage(request) {
      return respond(request);
    },
    streamMessage(request) {
      return createModelStream(async function* (): AsyncGenerator<ModelStreamEvent> {
        const response = respond(request);
        yield { type: "message_start", id: response.id, model: response.model, usage: response.usage };
        for (const [index, block] of response.content.entries()) {
          if (block.type === "tool_use") {
            yield { type: "block_start", index, block: { ...block, input: {} } };
            yield { type: "tool_input_delta", index, partialJson: JSON.stringify(block.input) };
          } else if (block.type === "text") {
            yield { type: "block_start", index, block: { type: "text", text: "" } };
            yield { type: "text_delta", index, text: block.text };
          }
          yield { type: "block_stop", index };
        }
        yield { type: "message_delta", stopReason: response.stopReason, usage: { outputTokens: 20 } };
        yield { type: "message_stop" };
      });
    },
    async countTokens(request) {
      return { inputTokens: inputTokensOf(request), method: "heuristic" };
    },
    getModelLimits: (model) => getModelLimits(model),
  };
}

/** A tool `inspect({ part })` whose results compaction must keep (only summaries make room), printing `print(part)`. */
export function keptInspectTool(print: (part: number) => string): Tool {
  return {
    name: "inspect",
    description: "Prints a part of the code base.",
    inputSchema: { type: "object", properties: { part: { type: "number" } }, required: ["part"] },
    readOnly: true,
    concurrencySafe: true,
    resultRetention: "keep",
    async execute(input) {
      return { content: print(Number(input.part)), isError: false };
    },
  };
}

/**
 * User turns of `callsPerTurn` calls of `inspect` each (the part numbered by the call, after the note `note(call)`),
 * then the end of the turn: what `createInstantProvider` answers in the long-session benches and tests.
 */
export function inspectingTurns(
  callsPerTurn: number,
  note: (call: number) => string,
): (request: ModelRequest) => InstantReply {
  let calls = 0;
  let inTurn = 0;
  return () => {
    if (inTurn === callsPerTurn) {
      inTurn = 0;
      return { text: "Done with this step." };
    }
    inTurn++;
    calls++;
    return { text: note(calls), toolCall: { name: "inspect", input: { part: calls } } };
  };
}

/** A part of the code base as `inspect` prints it in the tests: a heading and 120 lines (about 1,200 tokens). */
export const printedPart = (part: number) =>
  `part ${part}\n${Array.from({ length: 120 }, (_, line) => `  step_${line}(part_${part}); // ok`).join("\n")}`;

/**
 * A long session's options in the benches' and tests' shape: `tools` at a 16,000-token window (2,000 for the
 * answer), the extractive summariser, what else the context needs (`retainEntries`, …) from `context`.
 */
export function longSessionOptions(
  provider: ModelProvider,
  tools: Tool[],
  sessionsDir: string,
  context: Partial<Pick<ContextManagerOptions, "retainEntries">> = {},
): AgentSessionOptions {
  return {
    provider,
    model: "claude-sonnet-4-6",
    tools,
    sessionsDir,
    context: {
      limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
      summarizer: createExtractiveSummarizer(),
      ...context,
    },
  };
}
