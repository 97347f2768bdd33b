import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import {
  type ContextManagerOptions,
  type ContextStatus,
  createContextManager,
  createHostConversation,
  firstRetention,
  type HostConversation,
  type HostConversationListener,
  type PrepareResult,
} from "@unforget/compact";
import {
  type Message,
  PromptTooLongError,
  type ToolDefinition,
  type ToolResultRetention,
} from "@unforget/core";
import { HISTORY_TOOLS_NOTE } from "@unforget/history";
import { createMiddleware } from "langchain";
import { langChainHistory } from "./history-tools.ts";
import { isRecord } from "./is-record.ts";
import { langChainCodec } from "./langchain-codec.ts";
import {
  chatModelId,
  createLangChainSummarizer,
  type SummaryChatModel,
  typedError,
} from "./langchain-summarizer.ts";
import { langChainBreakpoints } from "./settled-breakpoint.ts";

/** LangGraph's id for "remove every message" (`REMOVE_ALL_MESSAGES` of `@langchain/langgraph`). */
export const REMOVE_ALL_MESSAGES = "__remove_all__";

/** Options of the LangChain adapters: the ContextManager's, with LangChain's model. */
export interface LangChainContextOptions extends Omit<ContextManagerOptions, "model" | "onEvent"> {
  /**
   * The chat model, or its id. Its id names the context window (unless `limits` is given); a model object also
   * writes the summaries, unless `summarizer` says otherwise.
   */
  model: string | SummaryChatModel;
  /** The agent's system prompt, counted until the first response reports usage (`"state"` mode does not see it). */
  system?: string;
  /** Receives the manager's events (layers, summaries, cache breaks) and the adapter's (unknown shapes, resets). */
  onEvent?: HostConversationListener;
  /**
   * Puts the settled prefix's cache breakpoint on the messages sent (`cache_control` on the last block of the
   * last message no cheap layer will change, as ChatAnthropic reads it; see the README). Default on for a Claude
   * model (an Anthropic chat model, or an id that starts with "claude"), off otherwise: another integration may
   * send the field to an API that refuses it.
   */
  settledBreakpoint?: boolean;
}

export interface ContextMiddlewareOptions extends LangChainContextOptions {
  /**
   * Where the projection goes. `"state"` (default): `beforeModel` writes it into the agent's state (LangChain's
   * own way, as `summarizationMiddleware` does), so checkpoints stay small; the whole transcript stays with the
   * manager (and on disk with a `transcript`). `"request"`: `wrapModelCall` sends it to the model only, and the
   * state keeps every message.
   */
  mode?: "state" | "request";
  /**
   * The history tools (`context_status`, `history_search`, `history_read`), which the middleware gives the agent
   * itself, with a paragraph about them after the system prompt. They index the `transcript` (or, without one,
   * `<sessionDir>/transcript.jsonl`, which the middleware then writes); default false.
   */
  history?: boolean;
}

/** What the middleware exposes besides being one. */
export interface ContextMiddlewareState {
  /** The last call's preparation: what each layer did, the count, the status. */
  readonly lastResult: PrepareResult | undefined;
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
}

/** What the agent's tools say about their old results (`metadata.resultRetention`), learned from its requests. */
interface ToolRetentions {
  /** Called with a model request's tools: records what each one's metadata says. */
  observe(tools: unknown): void;
  /** What the tools seen so far say about `name`. */
  retention(name: string): ToolResultRetention | undefined;
}

const RETENTIONS: readonly unknown[] = ["reproducible", "persist", "keep"];

function createToolRetentions(): ToolRetentions {
  const known = new Map<string, ToolResultRetention>();
  return {
    observe(tools) {
      if (!Array.isArray(tools)) return;
      for (const tool of tools) {
        if (!isRecord(tool) || typeof tool.name !== "string") continue;
        const value = isRecord(tool.metadata) ? tool.metadata.resultRetention : undefined;
        if (RETENTIONS.includes(value)) known.set(tool.name, value as ToolResultRetention);
      }
    },
    retention: (name) => known.get(name),
  };
}

/** The manager options for a LangChain model: its id, a summariser on it unless one is given, the tools' retention. */
export function managerOptions(
  options: LangChainContextOptions,
  tools?: ToolRetentions,
): ContextManagerOptions {
  const {
    model,
    system: _system,
    onEvent: _onEvent,
    settledBreakpoint: _breakpoint,
    resultRetention,
    ...rest
  } = options;
  const summarizer =
    options.summarizer ?? (typeof model === "object" ? createLangChainSummarizer({ model }) : undefined);
  const retention = firstRetention(resultRetention, tools?.retention);
  return {
    ...rest,
    model: chatModelId(model) ?? "unknown",
    ...(summarizer ? { summarizer } : {}),
    ...(retention ? { resultRetention: retention } : {}),
  };
}

/** True for a Claude model: an Anthropic chat model, or an id that names one. */
function isClaude(model: LangChainContextOptions["model"]): boolean {
  const id = chatModelId(model)?.toLowerCase() ?? "";
  const llmType: unknown = isRecord(model) ? (model as Record<string, unknown>)._llmType : undefined;
  const type = typeof llmType === "function" ? String(llmType.call(model)) : "";
  return type.includes("anthropic") || id.startsWith("claude") || id.includes("anthropic.claude");
}

/** The conversation of one adapter: a host conversation on LangChain's messages with a manager per options. */
export function createLangChainConversation(
  options: LangChainContextOptions,
  tools?: ToolRetentions,
): HostConversation<BaseMessage> {
  const breakpoint = options.settledBreakpoint ?? isClaude(options.model);
  const control =
    options.config?.cacheTtl === "1h"
      ? ({ type: "ephemeral", ttl: "1h" } as const)
      : ({ type: "ephemeral" } as const);
  return createHostConversation<BaseMessage>({
    codec: langChainCodec,
    createManager: () => createContextManager(managerOptions(options, tools)),
    idPrefix: "langchain",
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(breakpoint ? { settledBreakpoint: langChainBreakpoints(control) } : {}),
  });
}

/** The tools of a model request, for counting. */
function requestTools(tools: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.flatMap((tool) =>
    isRecord(tool) && typeof tool.name === "string"
      ? [
          {
            name: tool.name,
            ...(typeof tool.description === "string" ? { description: tool.description } : {}),
            inputSchema: isRecord(tool.schema) ? tool.schema : {},
          },
        ]
      : [],
  );
}

/**
 * Unforget's context management as an agent middleware for `createAgent`: before each model call the ladder runs
 * on the agent's messages (cheap layers first, a summary only when they cannot make room, PreCompact and
 * PostCompact hooks around it) and the model sees the projection; the usage each `AIMessage` reports anchors the
 * count. When the provider refuses a prompt as too long, it compacts reactively and retries the call once.
 */
export function createContextMiddleware(options: ContextMiddlewareOptions) {
  const { mode = "state", history: withHistory = false, ...given } = options;
  const tools = createToolRetentions();
  let contextOptions: LangChainContextOptions = given;
  let historyTools: StructuredToolInterface[] = [];
  if (withHistory) {
    const history = langChainHistory(given, () => conversation.manager);
    historyTools = history.tools;
    contextOptions = { ...given, transcript: history.transcript };
  }
  const conversation = createLangChainConversation(contextOptions, tools);
  const providerId = `langchain:${chatModelId(options.model) ?? "model"}`;
  let lastResult: PrepareResult | undefined;
  const system = options.system;

  const prepareOptions = (systemText: string | undefined, tools?: unknown) => {
    const definitions = requestTools(tools);
    const text = systemText && systemText.length > 0 ? systemText : system;
    return { ...(text ? { system: text } : {}), ...(definitions ? { tools: definitions } : {}) };
  };

  const middleware = createMiddleware({
    name: "UnforgetContextMiddleware",
    ...(withHistory ? { tools: historyTools } : {}),
    ...(mode === "state"
      ? {
          beforeModel: async (state: { messages: BaseMessage[] }) => {
            conversation.append(state.messages);
            const prepared = await conversation.prepare(prepareOptions(undefined));
            lastResult = prepared.result;
            if (!prepared.changed) return undefined;
            return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...prepared.messages] };
          },
        }
      : {}),
    wrapModelCall: async (request, handler) => {
      tools.observe(request.tools);
      let current = withHistory ? withHistoryNote(request) : request;
      const given = typeof request.systemPrompt === "string" ? request.systemPrompt : undefined;
      const systemText = withHistory
        ? given
          ? `${given}\n\n${HISTORY_TOOLS_NOTE}`
          : HISTORY_TOOLS_NOTE
        : given;
      if (mode === "request") {
        conversation.append(request.messages);
        const prepared = await conversation.prepare(prepareOptions(systemText, request.tools));
        lastResult = prepared.result;
        if (prepared.changed) current = { ...request, messages: prepared.messages };
      }
      try {
        return await handler(current);
      } catch (error) {
        const typed = typedError(error, providerId);
        if (!(typed instanceof PromptTooLongError)) throw error;
        // The model's limit is below what the ladder thought: compact reactively and send once more.
        const recovered = await conversation.recover(typed, prepareOptions(systemText, request.tools));
        lastResult = recovered.result;
        return handler({ ...current, messages: recovered.messages });
      }
    },
  });
  const extra: ContextMiddlewareState = {
    get lastResult() {
      return lastResult;
    },
    get messages() {
      return conversation.messages;
    },
    status: () => conversation.status(),
    on: (listener) => conversation.on(listener),
    flush: () => conversation.flush(),
  };
  return Object.defineProperties(middleware, Object.getOwnPropertyDescriptors(extra)) as typeof middleware &
    ContextMiddlewareState;
}

/** The request with the history tools' paragraph after its system prompt (once). */
function withHistoryNote<
  T extends { systemMessage: { concat(text: string): unknown }; systemPrompt?: string },
>(request: T): T {
  if (request.systemPrompt?.includes(HISTORY_TOOLS_NOTE)) return request;
  const systemMessage = request.systemMessage.concat(`\n\n${HISTORY_TOOLS_NOTE}`) as T["systemMessage"];
  return { ...request, systemMessage };
}
