import { createMessage, type Message, type RequestMessage, type ToolResultBlock } from "@unforget/core";
import { createContextPolicy } from "@unforget/tokens";
import { toRequestMessages } from "@unforget/transcript";
import type { ContextManager, LayerReport, PrepareResult } from "../src/index.ts";
import { createExtractiveSummarizer } from "../src/index.ts";

/**
 * Two policies re-implemented from the seed documents, as baselines for the replay benchmark. They keep
 * their own mutable message list (as the originals do) and answer `prepare` like a ContextManager, so
 * `replayConversation` can drive them. Both summarise with the same extractive summariser as ours, so the
 * comparison is of policies, not of summary quality.
 */

const chars = (messages: readonly Message[]) =>
  messages.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0);
/** Both originals estimate tokens as characters / 4. */
const estimate = (messages: readonly Message[]) => Math.ceil(chars(messages) / 4);

interface BaselineState {
  messages: Message[];
  synced: number;
}

function sync(state: BaselineState, history: readonly Message[]): void {
  for (let index = state.synced; index < history.length; index++)
    state.messages.push(structuredClone(history[index]!));
  state.synced = history.length;
}

async function summarize(
  messages: readonly Message[],
  budget: number,
): Promise<{ text: string; input: number }> {
  const { text } = await createExtractiveSummarizer().summarize({
    messages: [...messages],
    scope: "all",
    maxTokens: budget,
  });
  return { text, input: estimate(messages) + 300 };
}

function manager(
  run: (state: BaselineState, reports: LayerReport[]) => Promise<void>,
  threshold: number,
): ContextManager {
  const state: BaselineState = { messages: [], synced: 0 };
  const result = (reports: LayerReport[], before: number): PrepareResult => {
    const tokens = estimate(state.messages);
    return {
      messages: toRequestMessages(state.messages) as RequestMessage[],
      projected: state.messages,
      tokensBefore: before,
      tokens,
      actions: reports,
      status: {
        tokens,
        contextWindow: 0,
        effectiveWindow: 0,
        threshold,
        blockingLimit: 0,
        percentUsed: 0,
        turnsUntilCompaction: undefined,
        compactions: 0,
        recompactionChain: 0,
        failures: {},
      },
    };
  };
  const unsupported = () => {
    throw new Error("not part of the baseline");
  };
  return {
    layers: [],
    async prepare(history) {
      sync(state, history);
      const before = estimate(state.messages);
      const reports: LayerReport[] = [];
      await run(state, reports);
      return result(reports, before);
    },
    async recover() {
      // Both originals replace everything with a summary on an overflow (seed 001's reactive compact keeps 5).
      const reports: LayerReport[] = [];
      const before = estimate(state.messages);
      const keep = state.messages.slice(-5);
      const { text, input } = await summarize(state.messages.slice(0, -5), 2_000);
      state.messages = [createMessage("user", `[Reactive compact]\n\n${text}`), ...keep];
      reports.push(report("reactive", before, estimate(state.messages), input));
      return result(reports, before);
    },
    compact: unsupported,
    requestCompaction: unsupported,
    requestSnip: unsupported,
    recordMetadata: unsupported,
    status: () => result([], estimate(state.messages)).status,
    entries: [],
    on: () => () => {},
  };
}

function report(
  layer: LayerReport["layer"],
  before: number,
  after: number,
  summarizerInput?: number,
): LayerReport {
  return {
    layer,
    trigger: "auto",
    tokensBefore: before,
    tokensAfter: after,
    tokensFreed: Math.max(0, before - after),
    durationMs: 0,
    stats:
      summarizerInput === undefined ? {} : { summarizerCalls: 0, summarizerInputTokens: summarizerInput },
    ...(summarizerInput === undefined ? {} : { summarizer: "extractive" }),
    reason: "baseline",
  };
}

/**
 * BaseAgent's policy: usable = window − output reserve; at 85 % of it, prune old tool outputs (scan
 * backwards, protect the latest 40K tokens of output and the last 2 user turns, act only if ≥ 20K is freed);
 * still above, summarise everything into one message. The 40K / 20K constants were set for a 200K window;
 * they are scaled by usable / 168K here so that the policy can work at 16K and 32K.
 */
export function createBaseAgentBaseline(window: number, maxOutputTokens: number): ContextManager {
  const usable = window - maxOutputTokens;
  const threshold = Math.floor(usable * 0.85);
  const scale = usable / 168_000;
  const protect = 40_000 * scale;
  const minimum = 20_000 * scale;
  return manager(async (state, reports) => {
    let tokens = estimate(state.messages);
    if (tokens <= threshold) return;
    let turns = 0;
    let total = 0;
    let pruned = 0;
    const toPrune: ToolResultBlock[] = [];
    for (let index = state.messages.length - 1; index >= 0; index--) {
      const message = state.messages[index]!;
      if (message.role === "user" && !message.content.some((block) => block.type === "tool_result")) turns++;
      if (turns < 2) continue;
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        const size = Math.ceil(JSON.stringify(block.content).length / 4);
        total += size;
        if (total > protect) {
          pruned += size;
          toPrune.push(block);
        }
      }
    }
    if (pruned > minimum) {
      for (const block of toPrune) block.content = "[Old tool result content cleared]";
      const after = estimate(state.messages);
      reports.push(report("microcompact", tokens, after));
      tokens = after;
    }
    if (tokens <= threshold) return;
    const { text, input } = await summarize(state.messages, Math.floor(usable * 0.15));
    state.messages = [
      createMessage(
        "user",
        `Another language model started to solve this problem and produced a summary of its thinking process. Here is the summary from the previous context:\n${text}`,
      ),
    ];
    reports.push(report("summary", tokens, estimate(state.messages), input));
  }, threshold);
}

/**
 * The teaching re-implementation's pipeline, every turn: tool-result budget (200K characters in the last
 * message), snip (over 50 messages keep 3 + 47), micro (all but the 3 most recent results longer than 120
 * characters become a placeholder), then a summary of everything above the threshold (the same threshold as
 * the policy under test, so only the ladder differs).
 */
export function createTeachingBaseline(window: number, maxOutputTokens: number): ContextManager {
  const threshold = createContextPolicy({ contextWindow: window, maxOutputTokens }, { env: {} }).evaluate(
    0,
  ).autoCompactThreshold;
  return manager(async (state, reports) => {
    const before = estimate(state.messages);
    const last = state.messages[state.messages.length - 1];
    if (last) {
      const blocks = last.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
      let total = blocks.reduce((sum, block) => sum + JSON.stringify(block.content).length, 0);
      for (const block of [...blocks].sort(
        (a, b) => JSON.stringify(b.content).length - JSON.stringify(a.content).length,
      )) {
        if (total <= 200_000) break;
        const text = typeof block.content === "string" ? block.content : JSON.stringify(block.content);
        block.content = `<persisted-output>\n${text.slice(0, 2_000)}\n</persisted-output>`;
        total = blocks.reduce((sum, item) => sum + JSON.stringify(item.content).length, 0);
      }
    }
    if (state.messages.length > 50) {
      let headEnd = 3;
      let tailStart = state.messages.length - 47;
      const hasUse = (message: Message | undefined) =>
        message?.content.some((block) => block.type === "tool_use") ?? false;
      const isResult = (message: Message | undefined) =>
        message?.content.some((block) => block.type === "tool_result") ?? false;
      if (hasUse(state.messages[headEnd - 1]))
        while (headEnd < state.messages.length && isResult(state.messages[headEnd])) headEnd++;
      if (isResult(state.messages[tailStart]) && hasUse(state.messages[tailStart - 1])) tailStart--;
      if (tailStart > headEnd) {
        const snipped = tailStart - headEnd;
        state.messages = [
          ...state.messages.slice(0, headEnd),
          createMessage("user", `[snipped ${snipped} messages from conversation middle]`),
          ...state.messages.slice(tailStart),
        ];
      }
    }
    const results = state.messages.flatMap((message) =>
      message.content.filter((block): block is ToolResultBlock => block.type === "tool_result"),
    );
    for (const block of results.slice(0, -3)) {
      if (JSON.stringify(block.content).length > 120)
        block.content = "[Earlier tool result compacted. Re-run if needed.]";
    }
    const tokens = estimate(state.messages);
    if (tokens < before) reports.push(report("microcompact", before, tokens));
    if (tokens <= threshold) return;
    const { text, input } = await summarize(state.messages, Math.floor(threshold * 0.15));
    state.messages = [createMessage("user", `[Compacted]\n\n${text}`)];
    reports.push(report("summary", tokens, estimate(state.messages), input));
  }, threshold);
}
