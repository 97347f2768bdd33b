import {
  type ContextManager,
  type ContextManagerOptions,
  type ContextStatus,
  createContextManager,
  createHostConversation,
  firstRetention,
  type HostConversation,
  type HostConversationListener,
  type HostConversationOptions,
  type PrepareResult,
  type ResultRetentionSetting,
} from "@unforget/compact";
import type { Message, ToolDefinition, ToolResultRetention } from "@unforget/core";
import { asSchema, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { createAiSdkSummarizer } from "./ai-sdk-summarizer.ts";
import { aiSdkHistory } from "./history-tool-set.ts";
import { isRecord } from "./is-record.ts";
import { createModelMessageCodec } from "./model-message-codec.ts";
import {
  anthropicBreakpoint,
  modelMessageBreakpoints,
  type PartProviderOptions,
} from "./settled-breakpoint.ts";
import { usageFromAiSdk } from "./usage.ts";

/** Options of `createAiSdkContext` and `createContextMiddleware`: the ContextManager's, with the AI SDK's model. */
export interface AiSdkContextOptions extends Omit<ContextManagerOptions, "model" | "onEvent"> {
  /**
   * The model the loop calls, or its id. Its id names the context window (unless `limits` is given); a model
   * object also writes the summaries, unless `summarizer` says otherwise.
   */
  model: LanguageModel;
  /** The system prompt, counted until the first response reports usage (AI SDK 7 gives it to `prepareStep` itself). */
  system?: string;
  /**
   * The loop's tools, counted likewise; each one's `metadata.resultRetention` ("reproducible", "persist" or
   * "keep") says what compaction may do with its old results (`resultRetention` answers first).
   */
  tools?: ToolSet;
  /** Receives the manager's events (layers, summaries, cache breaks) and the adapter's (unknown shapes, resets). */
  onEvent?: HostConversationListener;
  /**
   * The provider options that put the settled prefix's cache breakpoint on the request: on the last part of the
   * last message no cheap layer will change (see the README). Default Anthropic's cache control (with the
   * one-hour lifetime when `config.cacheTtl` is "1h"), which the other providers ignore; `false` leaves the
   * request's breakpoints to you.
   */
  settledBreakpoint?: false | PartProviderOptions;
  /**
   * The history tools (`context_status`, `history_search`, `history_read`) as `context.historyTools`, indexing the
   * `transcript` (or, without one, `<sessionDir>/transcript.jsonl`, which the adapter then writes); default false.
   */
  history?: boolean;
}

/** What `prepareStep` receives from `generateText` / `streamText` (the fields the adapter reads, in AI SDK 6 and 7). */
export interface PrepareStepInput {
  /** The messages the step would send. */
  messages: ModelMessage[];
  /** The steps so far: their usage anchors the count. */
  steps: ReadonlyArray<{ usage: unknown; response?: { id?: string; modelId?: string } }>;
  /** The step's system prompt (AI SDK 7). */
  instructions?: unknown;
}

/** The AI SDK's tool loop with Unforget's context management in `prepareStep`. */
export interface AiSdkContext {
  /**
   * Pass as `prepareStep` to `generateText`, `streamText` or an `Agent`. Called before every step: records the new
   * messages with the usage the previous steps reported, runs the ladder, and returns the messages to send
   * (nothing when they are unchanged). Compose it with your own step logic by spreading its result.
   */
  prepareStep(step: PrepareStepInput): Promise<{ messages?: ModelMessage[] }>;
  /** The last step's preparation: what each layer did, the count, the status. */
  readonly lastResult: PrepareResult | undefined;
  /** The manager of the current conversation. */
  readonly manager: ContextManager;
  /** The whole conversation as the manager received it. */
  readonly messages: readonly Message[];
  /** The context status now (cheap). */
  status(): ContextStatus;
  /** Subscribes to every event; returns the unsubscribe function. */
  on(listener: HostConversationListener): () => void;
  /**
   * Waits for the tool outputs still being saved to the session folder (written after the step that saw them):
   * call it before removing the folder or ending the process.
   */
  flush(): Promise<void>;
  /**
   * With `history: true`, the history tools as AI SDK tools (`context_status`, `history_search`,
   * `history_read`): give them to the loop with yours, and `HISTORY_TOOLS_NOTE` in the system prompt. Empty otherwise.
   */
  readonly historyTools: ToolSet;
}

export function modelIdOf(model: LanguageModel): string {
  if (typeof model === "string") return model;
  return isRecord(model) && typeof model.modelId === "string" ? model.modelId : "unknown";
}

const RETENTIONS: readonly unknown[] = ["reproducible", "persist", "keep"];

/** What the AI SDK tools say about their old results (`metadata.resultRetention`), by name. */
function toolRetention(tools: ToolSet | undefined): ResultRetentionSetting | undefined {
  if (!tools) return undefined;
  return (name) => {
    const metadata: unknown = Object.hasOwn(tools, name) ? tools[name]?.metadata : undefined;
    const value = isRecord(metadata) ? metadata.resultRetention : undefined;
    return RETENTIONS.includes(value) ? (value as ToolResultRetention) : undefined;
  };
}

/**
 * The manager options for an AI SDK model: its id, a summariser on it (within the output limit) unless one is
 * given, and what the tools say about their results.
 */
export function managerOptions(options: AiSdkContextOptions): ContextManagerOptions {
  const {
    model,
    system: _system,
    tools,
    onEvent: _onEvent,
    settledBreakpoint: _breakpoint,
    history: _history,
    resultRetention,
    ...rest
  } = options;
  const maxOutputTokens = options.limits?.maxOutputTokens;
  const summarizer =
    options.summarizer ??
    (typeof model === "object"
      ? createAiSdkSummarizer({ model, ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}) })
      : undefined);
  const retention = firstRetention(resultRetention, toolRetention(tools));
  return {
    ...rest,
    model: modelIdOf(model),
    ...(summarizer ? { summarizer } : {}),
    ...(retention ? { resultRetention: retention } : {}),
  };
}

/** The host conversation's options for the settled breakpoint (none when switched off). */
export function settledBreakpointOption(
  options: AiSdkContextOptions,
): Pick<HostConversationOptions<ModelMessage>, "settledBreakpoint"> {
  if (options.settledBreakpoint === false) return {};
  const marker = options.settledBreakpoint ?? anthropicBreakpoint(options.config?.cacheTtl);
  return { settledBreakpoint: modelMessageBreakpoints(marker) };
}

/** The tool definitions of an AI SDK tool set, for counting (resolved once). */
export async function toolDefinitions(tools: ToolSet | undefined): Promise<ToolDefinition[] | undefined> {
  if (!tools) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    const schema = await Promise.resolve(asSchema(tool.inputSchema).jsonSchema);
    definitions.push({
      name,
      ...(typeof tool.description === "string" ? { description: tool.description } : {}),
      inputSchema: isRecord(schema) ? schema : {},
    });
  }
  return definitions;
}

/** The text of AI SDK 7's step instructions (a string, a system message, or a list of them). */
export function instructionsText(instructions: unknown): string | undefined {
  if (typeof instructions === "string") return instructions;
  const list = Array.isArray(instructions) ? instructions : [instructions];
  const texts = list.flatMap((item) =>
    isRecord(item) && typeof item.content === "string" ? [item.content] : [],
  );
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

/**
 * Unforget's context management for the AI SDK's tool loop (`generateText` / `streamText` with `stopWhen`, or an
 * `Agent`): pass `context.prepareStep`. Each step, the messages new since the last one go to a `ContextManager`
 * with the usage the steps reported, the ladder runs (cheap layers first, a summary only when they cannot make
 * room, PreCompact / PostCompact hooks around it), and the step sends the projection. Works with the AI SDK 6
 * (which passes the whole history each step) and 7 (which carries the returned messages forward).
 */
export function createAiSdkContext(given: AiSdkContextOptions): AiSdkContext {
  let historyTools: ToolSet = {};
  let options = given;
  if (given.history) {
    const history = aiSdkHistory(given, () => conversation.manager);
    historyTools = history.tools;
    // Counted with the loop's tools, and their results are reproducible (read again from the transcript).
    options = { ...given, transcript: history.transcript, tools: { ...given.tools, ...historyTools } };
  }
  const conversation: HostConversation<ModelMessage> = createHostConversation({
    codec: createModelMessageCodec(),
    createManager: () => createContextManager(managerOptions(options)),
    idPrefix: "aisdk",
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...settledBreakpointOption(options),
  });
  let tools: Promise<ToolDefinition[] | undefined> | undefined;
  let seenSteps = 0;
  let lastResult: PrepareResult | undefined;
  let manager = conversation.manager;

  return {
    async prepareStep(step) {
      const added = conversation.append(step.messages);
      if (conversation.manager !== manager) {
        // A new conversation: its steps start over.
        manager = conversation.manager;
        seenSteps = step.steps.length === 0 ? 0 : step.steps.length - 1;
      }
      if (step.steps.length < seenSteps) seenSteps = 0;
      attachUsage(added, step.steps.slice(seenSteps));
      seenSteps = step.steps.length;
      tools ??= toolDefinitions(options.tools);
      const system = instructionsText(step.instructions) ?? options.system;
      const definitions = await tools;
      const prepared = await conversation.prepare({
        ...(system !== undefined ? { system } : {}),
        ...(definitions ? { tools: definitions } : {}),
      });
      lastResult = prepared.result;
      return prepared.changed ? { messages: prepared.messages } : {};
    },
    get lastResult() {
      return lastResult;
    },
    get manager() {
      return conversation.manager;
    },
    get messages() {
      return conversation.messages;
    },
    status: () => conversation.status(),
    on: (listener) => conversation.on(listener),
    flush: () => conversation.flush(),
    historyTools,
  };
}

/**
 * Gives the new assistant messages the usage of the steps that produced them, newest with newest (a step's
 * response is one assistant message, and its tool results follow in a tool message).
 */
function attachUsage(
  added: readonly Message[],
  steps: ReadonlyArray<{ usage: unknown; response?: { id?: string; modelId?: string } }>,
): void {
  const assistants = added.filter((message) => message.role === "assistant");
  for (let offset = 1; offset <= Math.min(assistants.length, steps.length); offset++) {
    const message = assistants[assistants.length - offset]!;
    const step = steps[steps.length - offset]!;
    const usage = usageFromAiSdk(step.usage);
    if (usage) message.usage = usage;
    if (typeof step.response?.id === "string") message.responseId = step.response.id;
    if (typeof step.response?.modelId === "string") message.model = step.response.modelId;
  }
}
