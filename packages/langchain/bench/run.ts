import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  ToolMessage,
  trimMessages,
} from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createContextManager, createExtractiveSummarizer, type LayerReport } from "@unforget/compact";
import type { Message, RequestMessage } from "@unforget/core";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { estimateMessageTokens } from "@unforget/tokens";
import { countTokensApproximately, summarizationMiddleware } from "langchain";
import {
  type HostPolicy,
  nativeLadder,
  printCustomToolSteps,
  printOverhead,
  printReplayTables,
  renamedRetention,
  thresholdFor,
  withRenamedTools,
} from "../../ai-sdk/bench/replay-rows.ts";
import {
  type ContextMiddlewareOptions,
  createContextMiddleware,
  fromLangChainMessages,
  toLangChainMessages,
} from "../src/index.ts";
import { applyUpdate, hookOf } from "./before-model.ts";
import { measureCustomToolSteps } from "./custom-tool-steps.ts";

/**
 * The LangChain adapter's benchmark: the middleware's own overhead per model call at a 100K-token context, and
 * the compaction replay's row "LangChain + Unforget" (the createAgent middleware) beside `trimMessages` and
 * `summarizationMiddleware`, on the same sessions and windows as packages/compact/bench. Prints markdown.
 */

const maxOutput = (window: number) => Math.min(8_000, Math.floor(window / 4));

/** Converts the replay's history to LangChain messages once per message, and what is sent back for counting. */
function createHostView() {
  const toHost = new WeakMap<Message, BaseMessage[]>();
  const toCount = new WeakMap<BaseMessage, Message>();
  let ids = 0;
  return {
    host(message: Message): BaseMessage[] {
      let converted = toHost.get(message);
      if (!converted) {
        // As LangGraph's reducer does, every message in an agent's state has an id.
        converted = toLangChainMessages([message]).map((host) => {
          host.id ??= `lc_${++ids}`;
          return host;
        });
        toHost.set(message, converted);
      }
      return converted;
    },
    request(sent: readonly BaseMessage[]): RequestMessage[] {
      return sent.map((host) => {
        let message = toCount.get(host);
        if (!message) {
          message = fromLangChainMessages([host])[0]!;
          toCount.set(host, message);
        }
        return message;
      });
    },
  };
}

type Step = (
  state: BaseMessage[],
  full: BaseMessage[],
) => Promise<{ messages: BaseMessage[]; actions: LayerReport[] }>;

/** The replay's history as an agent's state: what the last call left in the state, then the new messages. */
function agentState(step: Step): ReturnType<HostPolicy["create"]> {
  const view = createHostView();
  let state: BaseMessage[] = [];
  const full: BaseMessage[] = [];
  let seen = 0;
  return {
    async prepare(history) {
      const tail = history.slice(seen).flatMap((message) => view.host(message));
      seen = history.length;
      full.push(...tail);
      const result = await step([...state, ...tail], full);
      state = result.messages;
      return { messages: view.request(state), actions: result.actions };
    },
  };
}

/** A chat model that writes extractive summaries (the replay's other rows summarise the same way), counting its input. */
class ExtractiveChatModel extends BaseChatModel {
  calls: { inputTokens: number }[] = [];
  _llmType() {
    return "extractive";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const input = fromLangChainMessages(messages);
    this.calls.push({ inputTokens: input.reduce((sum, message) => sum + estimateMessageTokens(message), 0) });
    const { text } = await createExtractiveSummarizer().summarize({
      messages: input,
      scope: "all",
      maxTokens: 2_000,
    });
    return { generations: [{ text, message: new AIMessage(text) }] };
  }
}

function summaryReport(inputTokens: number): LayerReport {
  return {
    layer: "summary",
    trigger: "auto",
    tokensBefore: 0,
    tokensAfter: 0,
    tokensFreed: 0,
    durationMs: 0,
    stats: { summarizerCalls: 1, summarizerInputTokens: inputTokens },
    summarizer: "extractive",
    reason: "summarizationMiddleware",
  };
}

/**
 * The adapter's row: the middleware's `beforeModel` on the agent's state. The replay's model is Claude (its
 * prices are Sonnet's), so the settled breakpoint is on, as it is by default for a Claude model.
 */
function middlewareRow(
  window: number,
  clock: () => number,
  extra: Partial<ContextMiddlewareOptions> = {},
): ReturnType<HostPolicy["create"]> {
  const middleware = createContextMiddleware({
    model: "replay",
    limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
    summarizer: createExtractiveSummarizer(),
    clock,
    settledBreakpoint: true,
    ...extra,
  });
  const beforeModel = hookOf(middleware);
  return agentState(async (state) => {
    const update = await beforeModel({ messages: state }, {});
    return { messages: applyUpdate(state, update), actions: middleware.lastResult?.actions ?? [] };
  });
}

const policies: HostPolicy[] = [
  nativeLadder,
  {
    name: "LangChain + Unforget (createAgent middleware)",
    create: (window, clock) => middlewareRow(window, clock),
  },
  withRenamedTools(
    "… tools renamed (`custom_Bash`, …), the host saying which are reproducible (`resultRetention`)",
    (window, clock) => middlewareRow(window, clock, { resultRetention: renamedRetention }),
  ),
  withRenamedTools(
    "… tools renamed, nothing said, a session folder (`sessionDir`): results saved before they are cleared",
    (window, clock, sessionDir) => middlewareRow(window, clock, sessionDir ? { sessionDir } : {}),
    true,
  ),
  {
    name: "LangChain trimMessages (last, to the threshold, starting on a human message)",
    create(window) {
      const threshold = thresholdFor(window);
      return agentState(async (_state, full) => ({
        messages: await trimMessages(full, {
          maxTokens: threshold,
          strategy: "last",
          tokenCounter: countTokensApproximately,
          startOn: "human",
          includeSystem: true,
        }),
        actions: [],
      }));
    },
  },
  {
    name: "LangChain summarizationMiddleware (at the threshold, keeps 20 messages)",
    create(window) {
      const model = new ExtractiveChatModel({});
      const middleware = summarizationMiddleware({ model, trigger: { tokens: thresholdFor(window) } });
      const beforeModel = hookOf(middleware as { beforeModel?: unknown });
      return agentState(async (state) => {
        const before = model.calls.length;
        const update = await beforeModel({ messages: state }, { context: {} });
        const actions = model.calls.slice(before).map((call) => summaryReport(call.inputTokens));
        return { messages: applyUpdate(state, update), actions };
      });
    },
  },
];

/** An agent's state of about `tokens` tokens: a request, then tool rounds of ~2,000 tokens, every message with an id. */
function agentConversation(tokens: number): BaseMessage[] {
  const messages: BaseMessage[] = [
    new HumanMessage({ id: "h0", content: "Read the whole module and explain it." }),
  ];
  let total = 0;
  for (let index = 0; total < tokens; index++) {
    const round = toolRound(index, 2_000);
    total += fromLangChainMessages(round).reduce((sum, message) => sum + estimateMessageTokens(message), 0);
    messages.push(...round);
  }
  return messages;
}

function toolRound(index: number, tokens: number): BaseMessage[] {
  const output = syntheticToolOutput(index, tokens);
  return [
    new AIMessage({
      id: `ai_${index}`,
      content: "",
      tool_calls: [
        { id: `call_${index}`, name: "read", args: { path: `src/file${index}.ts` }, type: "tool_call" },
      ],
      usage_metadata: { input_tokens: 100_000, output_tokens: 30, total_tokens: 100_030 },
    }),
    new ToolMessage({ id: `tool_${index}`, content: output, tool_call_id: `call_${index}` }),
  ];
}

/**
 * The middleware's `beforeModel` per model call at a 100K-token context when nothing fires (a 1M window), over
 * 300 calls of one new tool round each, as createAgent's state grows; beside it `ContextManager.prepare` on the
 * same conversation in Unforget messages, in the same run: the difference is the adapter's own cost.
 */
async function measureOverhead(calls = 300) {
  const limits = { contextWindow: 1_000_000, maxOutputTokens: 8_000 };
  let state = agentConversation(100_000);
  const rounds = Array.from({ length: calls }, (_, index) => toolRound(10_000 + index, 300));
  const middleware = createContextMiddleware({ model: "bench", limits });
  const beforeModel = hookOf(middleware);
  await beforeModel({ messages: state }, {});
  const adapter: number[] = [];
  for (const round of rounds) {
    state = [...state, ...round];
    const started = performance.now();
    state = applyUpdate(state, await beforeModel({ messages: state }, {}));
    adapter.push(performance.now() - started);
  }

  const manager = createContextManager({ model: "bench", limits });
  const history = fromLangChainMessages(agentConversation(100_000));
  await manager.prepare(history);
  const bare: number[] = [];
  for (const round of rounds) {
    history.push(...fromLangChainMessages(round));
    const started = performance.now();
    await manager.prepare(history);
    bare.push(performance.now() - started);
  }
  return { adapter, bare };
}

console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}\n`);
const overhead = await measureOverhead();
printOverhead(
  "The createAgent middleware's beforeModel per model call at a 100K-token context (nothing fires)",
  "beforeModel",
  overhead.adapter,
  overhead.bare,
);

console.log();
printCustomToolSteps(
  "The createAgent middleware's beforeModel per model call on requests of 60K tokens or more with a custom tool and a session folder",
  "beforeModel",
  [
    { clock: "warm (a response 1 s before each step)", ...(await measureCustomToolSteps(1_000)) },
    { clock: "cold (an hour before each step)", ...(await measureCustomToolSteps(3_600_000)) },
  ],
);
console.log(
  "\n(`custom_Run`, a tool no list knows, nothing said about it: its old results are saved before they are cleared. 40 rounds of 1,500 tokens, then 200 steps of one 600-token round each, a 200K window; only the steps whose request held 60K tokens or more are counted.)\n",
);

await printReplayTables(policies);
