import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { createMessage, createUsage, type Message } from "@unforget/core";
import { estimateMessagesTokens, estimateMessageTokens } from "@unforget/tokens";
import { countTokensApproximately, trimMessages } from "langchain";
import {
  applyToolResultBudget,
  type ContextManagerConfig,
  collapseContext,
  compactConversation,
  createContextManager,
  createExtractiveSummarizer,
  maskObservations,
  microcompact,
  snipCompact,
} from "../src/index.ts";

const WORDS = [
  "parse",
  "token",
  "cache",
  "module",
  "error",
  "config",
  "build",
  "result",
  "index",
  "stream",
  "layer",
  "value",
];

/** A tool round of about `tokens` tokens: an assistant call and its varied, code-like result. */
function round(index: number, tokens: number, time: number, contextTokens: number, tool = "Read"): Message[] {
  const lines: string[] = [];
  let state = index * 7919 + 1;
  for (let line = 0; line * 9 < tokens; line++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    lines.push(
      `  ${WORDS[state % 12]}_${line}(${WORDS[(state >> 4) % 12]}, ${state % 997}); // ${WORDS[(state >> 8) % 12]}`,
    );
  }
  const id = `toolu_${index}`;
  return [
    createMessage(
      "assistant",
      [{ type: "tool_use", id, name: tool, input: { file_path: `src/file${index}.ts` } }],
      {
        id: `a${index}`,
        timestamp: new Date(time).toISOString(),
        usage: createUsage({ inputTokens: contextTokens, outputTokens: 30 }),
        responseId: `resp_${index}`,
      },
    ),
    createMessage("user", [{ type: "tool_result", tool_use_id: id, content: lines.join("\n") }], {
      id: `r${index}`,
      timestamp: new Date(time + 500).toISOString(),
    }),
  ];
}

function conversation(totalTokens: number, perRound = 2_000, tool = "Read"): Message[] {
  const messages: Message[] = [
    createMessage("user", "Read the whole module and explain it.", {
      id: "u0",
      timestamp: new Date(0).toISOString(),
    }),
  ];
  let total = 0;
  for (let index = 0; total < totalTokens; index++) {
    const pair = round(index, perRound, index * 10_000, total, tool);
    for (const message of pair) total += estimateMessageTokens(message);
    messages.push(...pair);
  }
  return messages;
}

function toLangChain(messages: readonly Message[]): BaseMessage[] {
  return messages.map((message) => {
    if (message.role === "assistant") {
      const calls = message.content.flatMap((block) =>
        block.type === "tool_use"
          ? [{ id: block.id, name: block.name, args: block.input as Record<string, unknown> }]
          : [],
      );
      const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
      return new AIMessage({ content: text, tool_calls: calls });
    }
    const result = message.content.find((block) => block.type === "tool_result");
    if (result?.type === "tool_result")
      return new ToolMessage({
        content: typeof result.content === "string" ? result.content : JSON.stringify(result.content),
        tool_call_id: result.tool_use_id,
      });
    return new HumanMessage(
      message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(""),
    );
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export interface PrepareSpeedRow {
  contextTokens: number;
  messages: number;
  /** Our estimate of every message, from scratch (no usage anchor, nothing remembered): like for like with LangChain's. */
  oursFullMs: number;
  /** LangChain's `countTokensApproximately` of every message. */
  langChainFullMs: number;
  /** Our `prepare()` per turn: the new messages estimated, the count anchored on the last usage, the ladder's checks. */
  prepareMedianMs: number;
  prepareP95Ms: number;
  /** LangChain's per-turn work in an agent: `trimMessages` over the whole conversation (nothing trimmed), counting with `countTokensApproximately`. */
  langChainTrimMs: number;
}

/**
 * Two comparisons on one session of `tokens` tokens (one new tool round per turn, medians): counting every
 * message from scratch on both sides (the same work), and what each does per turn in an agent loop — our
 * `prepare()`, which estimates only what was added and anchors on the provider's usage, against LangChain's
 * `trimMessages`, which recounts the conversation each call because it keeps no state.
 */
export async function measurePrepare(
  tokens: number,
  turns = 300,
  config: ContextManagerConfig = {},
): Promise<PrepareSpeedRow> {
  // Results of a tool no cheap layer may clear: nothing is due however long it runs, yet the default policy
  // still looks at every message each call, as it does in a live session.
  const history = conversation(tokens, 2_000, "Task");
  const manager = createContextManager({
    model: "bench",
    limits: { contextWindow: tokens * 4, maxOutputTokens: 8_000 },
    clock: () => Date.parse(history[history.length - 1]!.timestamp),
    config,
  });
  await manager.prepare(history);
  const lc = toLangChain(history);
  const times: number[] = [];
  const trimTimes: number[] = [];
  let sink = 0;
  for (let turn = 0; turn < turns; turn++) {
    const added = round(100_000 + turn, 300, history.length * 10_000, manager.status().tokens, "Task");
    history.push(...added);
    let start = process.hrtime.bigint();
    const result = await manager.prepare(history);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.actions.length > 0)
      throw new Error(
        `a layer fired (${result.actions.map((action) => `${action.layer}: ${action.reason}`).join(", ")}): the no-op measurement is invalid`,
      );
    // LangChain's side gets the new messages converted outside the timing, as ours gets them as they are.
    lc.push(...toLangChain(added));
    start = process.hrtime.bigint();
    const trimmed = await trimMessages(lc, {
      maxTokens: tokens * 4,
      strategy: "last",
      tokenCounter: countTokensApproximately,
      startOn: "human",
      endOn: ["human", "tool"],
    });
    trimTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
    sink += trimmed.length;
  }
  const fullOurs: number[] = [];
  const fullLangChain: number[] = [];
  for (let run = 0; run < 30; run++) {
    let start = process.hrtime.bigint();
    // The estimator keeps nothing between calls: each run counts every message afresh.
    sink += estimateMessagesTokens(history);
    fullOurs.push(Number(process.hrtime.bigint() - start) / 1e6);
    start = process.hrtime.bigint();
    sink += countTokensApproximately(lc);
    fullLangChain.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (sink < 0) throw new Error("unreachable");
  const sorted = [...times].sort((a, b) => a - b);
  return {
    contextTokens: tokens,
    messages: history.length,
    oursFullMs: median(fullOurs),
    langChainFullMs: median(fullLangChain),
    prepareMedianMs: median(times),
    prepareP95Ms: sorted[Math.floor(sorted.length * 0.95)]!,
    langChainTrimMs: median(trimTimes),
  };
}

export interface LayerCostRow {
  layer: string;
  medianMs: number;
  tokensFreed: number;
}

/** The cost of each layer when it fires, on a 200K-token session (median of several runs). */
export async function measureLayers(tokens = 200_000): Promise<LayerCostRow[]> {
  const history = conversation(tokens);
  const last = Date.parse(history[history.length - 1]!.timestamp);
  const runs: [string, () => Promise<{ tokensFreed: number }> | { tokensFreed: number }][] = [
    ["tool-result-budget (middle cut)", () => applyToolResultBudget(history, { maxResultChars: 4_000 })],
    ["snip", () => snipCompact(history, { now: last })],
    ["microcompact (time)", () => microcompact(history, { now: last + 2 * 3_600_000 })],
    ["microcompact (prune)", () => microcompact(history, { strategy: "prune", now: last })],
    ["observation masking", () => maskObservations(history, { now: last })],
    ["collapse", () => collapseContext(history, { now: last })],
    [
      "summary (extractive)",
      async () => {
        const outcome = await compactConversation(history, {
          summarizer: createExtractiveSummarizer(),
          trigger: "auto",
          summaryMaxTokens: 20_000,
        });
        return { tokensFreed: outcome.tokensBefore - outcome.tokensAfter };
      },
    ],
  ];
  const rows: LayerCostRow[] = [];
  for (const [layer, run] of runs) {
    const times: number[] = [];
    let freed = 0;
    for (let attempt = 0; attempt < 7; attempt++) {
      const start = process.hrtime.bigint();
      freed = (await run()).tokensFreed;
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    rows.push({ layer, medianMs: median(times), tokensFreed: freed });
  }
  return rows;
}
