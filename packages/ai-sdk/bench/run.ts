import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { createContextManager, createExtractiveSummarizer, type LayerReport } from "@unforget/compact";
import type { Message, RequestMessage, Usage } from "@unforget/core";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { estimateMessageTokens } from "@unforget/tokens";
import { type ModelMessage, pruneMessages } from "ai";
import {
  type AiSdkContextOptions,
  createAiSdkContext,
  fromModelMessages,
  toModelMessages,
} from "../src/index.ts";
import { measureCustomToolSteps } from "./custom-tool-steps.ts";
import {
  type HostPolicy,
  nativeLadder,
  printCustomToolSteps,
  printOverhead,
  printReplayTables,
  renamedRetention,
  thresholdFor,
  withRenamedTools,
} from "./replay-rows.ts";

/**
 * The AI SDK adapter's benchmark: its own overhead per step at a 100K-token context, and the compaction replay's
 * rows "AI SDK + Unforget" (prepareStep) beside the AI SDK's `pruneMessages` cookbook, on the same sessions and
 * windows as packages/compact/bench. Prints markdown for BENCHMARKS.md.
 */

const maxOutput = (window: number) => Math.min(8_000, Math.floor(window / 4));

/** A step's usage in the AI SDK's shape, from the usage the replay recorded. */
function stepUsage(usage: Usage | undefined) {
  if (!usage) return { inputTokens: undefined, outputTokens: undefined };
  return {
    inputTokens: usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens,
    inputTokenDetails: {
      noCacheTokens: usage.inputTokens,
      cacheReadTokens: usage.cacheReadInputTokens,
      cacheWriteTokens: usage.cacheCreationInputTokens,
    },
    outputTokens: usage.outputTokens,
  };
}

/** Converts the replay's history to AI SDK messages once per message, and what is sent back for counting. */
function createHostView() {
  const toHost = new WeakMap<Message, ModelMessage[]>();
  const toCount = new WeakMap<ModelMessage, Message>();
  const toolNames = new Map<string, string>();
  return {
    host(message: Message): ModelMessage[] {
      let converted = toHost.get(message);
      if (!converted) {
        for (const block of message.content)
          if (block.type === "tool_use") toolNames.set(block.id, block.name);
        converted = toModelMessages([message]).map((host) => nameResults(host, toolNames));
        toHost.set(message, converted);
      }
      return converted;
    },
    request(sent: readonly ModelMessage[]): RequestMessage[] {
      return sent.map((host) => {
        let message = toCount.get(host);
        if (!message) {
          message = fromModelMessages([host])[0]!;
          toCount.set(host, message);
        }
        return message;
      });
    },
  };
}

/** A result converted alone has no call to take its tool's name from: the whole history's calls name it. */
function nameResults(message: ModelMessage, names: ReadonlyMap<string, string>): ModelMessage {
  if (message.role !== "tool") return message;
  return {
    ...message,
    content: message.content.map((part) =>
      part.type === "tool-result" && part.toolName === "unknown"
        ? { ...part, toolName: names.get(part.toolCallId) ?? "unknown" }
        : part,
    ),
  };
}

type Step = (
  input: ModelMessage[],
  steps: { usage: unknown; response: { id?: string } }[],
) => Promise<{ messages: ModelMessage[]; actions: LayerReport[] }>;

/** The replay's history as the AI SDK 7 sees it: what the last step returned, then the new messages. */
function carryForward(step: Step): ReturnType<HostPolicy["create"]> {
  const view = createHostView();
  let carried: ModelMessage[] = [];
  let seen = 0;
  const steps: { usage: unknown; response: { id?: string } }[] = [];
  return {
    async prepare(history) {
      const tail = history.slice(seen);
      seen = history.length;
      for (const message of tail)
        if (message.role === "assistant" && message.usage)
          steps.push({
            usage: stepUsage(message.usage),
            response: message.responseId ? { id: message.responseId } : {},
          });
      const input = [...carried, ...tail.flatMap((message) => view.host(message))];
      const result = await step(input, steps);
      carried = result.messages;
      return { messages: view.request(carried), actions: result.actions };
    },
  };
}

/** The adapter's row: prepareStep on the replay's history, AI SDK 7's way. */
function prepareStepRow(
  window: number,
  clock: () => number,
  extra: Partial<AiSdkContextOptions> = {},
): ReturnType<HostPolicy["create"]> {
  const context = createAiSdkContext({
    model: "replay",
    limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
    summarizer: createExtractiveSummarizer(),
    clock,
    ...extra,
  });
  return carryForward(async (messages, steps) => {
    const result = await context.prepareStep({ messages, steps });
    return { messages: result.messages ?? messages, actions: context.lastResult?.actions ?? [] };
  });
}

const policies: HostPolicy[] = [
  nativeLadder,
  { name: "AI SDK + Unforget (prepareStep)", create: (window, clock) => prepareStepRow(window, clock) },
  withRenamedTools(
    "… tools renamed (`custom_Bash`, …), the host saying which are reproducible (`resultRetention`)",
    (window, clock) => prepareStepRow(window, clock, { resultRetention: renamedRetention }),
  ),
  withRenamedTools(
    "… tools renamed, nothing said, a session folder (`sessionDir`): results saved before they are cleared",
    (window, clock, sessionDir) => prepareStepRow(window, clock, sessionDir ? { sessionDir } : {}),
    true,
  ),
  {
    name: "AI SDK pruneMessages (cookbook: over the threshold, reasoning before the last message, tool calls before the last 2)",
    create(window) {
      const threshold = thresholdFor(window);
      return carryForward(async (messages) => {
        // The cookbook's trigger: a character estimate of the messages against a threshold (here the ladder's).
        const estimate = Math.ceil(JSON.stringify(messages).length / 4);
        if (estimate <= threshold) return { messages, actions: [] };
        return {
          messages: pruneMessages({
            messages,
            reasoning: "before-last-message",
            toolCalls: "before-last-2-messages",
            emptyMessages: "remove",
          }),
          actions: [],
        };
      });
    },
  },
];

/** A conversation of about `tokens` tokens in AI SDK messages: a request, then tool rounds of ~2,000 tokens. */
function conversation(tokens: number, from = 0): ModelMessage[] {
  const messages: ModelMessage[] =
    from === 0 ? [{ role: "user", content: "Read the whole module and explain it." }] : [];
  let total = 0;
  for (let index = from; total < tokens; index++) {
    const round = toolRound(index, 2_000);
    total += round.tokens;
    messages.push(...round.messages);
  }
  return messages;
}

function toolRound(index: number, tokens: number): { messages: ModelMessage[]; tokens: number } {
  const output = syntheticToolOutput(index, tokens);
  const messages: ModelMessage[] = [
    {
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: `call_${index}`,
          toolName: "read",
          input: { path: `src/file${index}.ts` },
        },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${index}`,
          toolName: "read",
          output: { type: "text", value: output },
        },
      ],
    },
  ];
  const size = fromModelMessages(messages).reduce((sum, message) => sum + estimateMessageTokens(message), 0);
  return { messages, tokens: size };
}

/**
 * prepareStep per step at a 100K-token context when nothing fires (a 1M window), over 300 steps of one new tool
 * round each, the AI SDK 7's way (the returned list carried forward); beside it `ContextManager.prepare` on the
 * same conversation in Unforget messages, in the same run: the difference is the adapter's own cost.
 */
async function measureOverhead(steps = 300) {
  const limits = { contextWindow: 1_000_000, maxOutputTokens: 8_000 };
  const initial = conversation(100_000);
  const rounds = Array.from({ length: steps }, (_, index) => toolRound(10_000 + index, 300).messages);
  const usage = {
    inputTokens: 100_000,
    inputTokenDetails: { noCacheTokens: 100_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
    outputTokens: 30,
  };

  const context = createAiSdkContext({ model: "bench", limits });
  let messages = initial;
  const stepList: { usage: unknown }[] = [];
  await context.prepareStep({ messages, steps: stepList });
  const adapter: number[] = [];
  for (const round of rounds) {
    messages = [...messages, ...round];
    stepList.push({ usage });
    const started = performance.now();
    const result = await context.prepareStep({ messages, steps: stepList });
    adapter.push(performance.now() - started);
    messages = result.messages ?? messages;
  }

  const manager = createContextManager({ model: "bench", limits });
  const history = fromModelMessages(initial);
  await manager.prepare(history);
  const bare: number[] = [];
  for (const round of rounds) {
    const added = fromModelMessages(round);
    const assistant = added.find((message) => message.role === "assistant");
    if (assistant)
      assistant.usage = {
        inputTokens: 100_000,
        outputTokens: 30,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      };
    history.push(...added);
    const started = performance.now();
    await manager.prepare(history);
    bare.push(performance.now() - started);
  }
  return { adapter, bare, messages: initial.length };
}

console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}\n`);
const overhead = await measureOverhead();
printOverhead(
  "prepareStep per step at a 100K-token context (nothing fires)",
  "prepareStep",
  overhead.adapter,
  overhead.bare,
);
console.log(`\n(${overhead.messages} AI SDK messages at the start, 300 steps of one tool round each.)`);

console.log();
printCustomToolSteps(
  "prepareStep per step on requests of 60K tokens or more with a custom tool and a session folder",
  "prepareStep",
  [
    { clock: "warm (a response 1 s before each step)", ...(await measureCustomToolSteps(1_000)) },
    { clock: "cold (an hour before each step)", ...(await measureCustomToolSteps(3_600_000)) },
  ],
);
console.log(
  "\n(`custom_Run`, a tool no list knows, nothing said about it: its old results are saved before they are cleared. 40 rounds of 1,500 tokens, then 200 steps of one 600-token round each, a 200K window; only the steps whose request held 60K tokens or more are counted.)\n",
);

await printReplayTables(policies);
