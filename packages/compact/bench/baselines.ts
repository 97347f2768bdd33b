import { createMessage, type Message, type RequestMessage, type ToolResultBlock } from "@unforget/core";
import { createContextPolicy, estimateMessageTokens } from "@unforget/tokens";
import { toRequestMessages } from "@unforget/transcript";
import type { ContextManager, LayerReport, PrepareResult } from "../src/index.ts";
import { createExtractiveSummarizer } from "../src/index.ts";

/**
 * Policies re-implemented from public descriptions of other agents (BaseAgent, learn-claude-code) and from the issue, as baselines for the replay benchmark. Each
 * keeps its own list of the conversation and answers `prepare` like a ContextManager, so
 * `replayConversation` drives it as it drives ours. They never change a message or a block they were
 * given or have returned: every edit makes a new object (a request already billed must stay as it was
 * sent). The summarising ones use the same extractive summariser as ours, so the comparison is of policies.
 */

/** A baseline's step: the conversation it keeps, in; the conversation to send and what it did, out. */
type Step = (
  messages: readonly Message[],
  reports: LayerReport[],
) => readonly Message[] | Promise<readonly Message[]>;

const chars = (messages: readonly Message[]) =>
  messages.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0);
/** BaseAgent and learn-claude-code estimate tokens as characters / 4. */
const quarterChars = (messages: readonly Message[]) => Math.ceil(chars(messages) / 4);

const resultChars = (block: ToolResultBlock) =>
  typeof block.content === "string" ? block.content.length : JSON.stringify(block.content).length;
const resultString = (block: ToolResultBlock) =>
  typeof block.content === "string"
    ? block.content
    : block.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");

/** The message with some of its tool results' contents replaced (new message, new blocks). */
function withResults(message: Message, replace: (block: ToolResultBlock) => string | undefined): Message {
  let changed = false;
  const content = message.content.map((block) => {
    if (block.type !== "tool_result") return block;
    const replacement = replace(block);
    if (replacement === undefined) return block;
    changed = true;
    return { ...block, content: replacement };
  });
  return changed ? { ...message, content } : message;
}

/** Observation messages (SWE-agent, mini-swe-agent) carry tool output as user text: the baselines treat them as results. */
const isObservation = (message: Message) => message.role === "user" && message.isObservation === true;
const observationText = (message: Message) =>
  message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");

async function summarize(messages: readonly Message[], budget: number) {
  const { text } = await createExtractiveSummarizer().summarize({
    messages: [...messages],
    scope: "all",
    maxTokens: budget,
  });
  return { text, input: quarterChars(messages) + 300, output: Math.ceil(text.length / 4) };
}

function report(
  layer: string,
  before: number,
  after: number,
  summary?: { input: number; output: number },
): LayerReport {
  return {
    layer,
    trigger: "auto",
    tokensBefore: before,
    tokensAfter: after,
    tokensFreed: Math.max(0, before - after),
    durationMs: 0,
    stats: summary
      ? { summarizerCalls: 0, summarizerInputTokens: summary.input, summarizerOutputTokens: summary.output }
      : {},
    ...(summary ? { summarizer: "extractive" } : {}),
    reason: "baseline",
  };
}

export interface BaselineManagerOptions {
  /** What the original does after the provider refuses: a summary of all but the last five messages (learn-claude-code's reactive compact), or nothing (the call overflows). */
  recover?: "summary" | "none";
  /** A stateless policy (the peers' functions) is given the whole conversation every call, not what it sent last; it never recovers with a summary. */
  stateless?: boolean;
}

/** A ContextManager around a step, for `replayConversation`. */
export function baselineManager(
  threshold: number,
  step: Step,
  options: BaselineManagerOptions = {},
): ContextManager {
  const recover = options.recover ?? "summary";
  let kept: readonly Message[] = [];
  let synced = 0;
  const result = (reports: LayerReport[], before: number): PrepareResult => {
    const tokens = quarterChars(kept);
    return {
      messages: toRequestMessages(kept) as RequestMessage[],
      projected: [...kept],
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
    async prepare(conversation) {
      kept = options.stateless ? conversation : [...kept, ...conversation.slice(synced)];
      synced = conversation.length;
      const before = quarterChars(kept);
      const reports: LayerReport[] = [];
      kept = await step(kept, reports);
      return result(reports, before);
    },
    async recover(error) {
      if (recover === "none") throw error;
      const before = quarterChars(kept);
      const tail = kept.slice(-5);
      const summary = await summarize(kept.slice(0, -5), 2_000);
      kept = [createMessage("user", `[Reactive compact]\n\n${summary.text}`), ...tail];
      return result([report("reactive", before, quarterChars(kept), summary)], before);
    },
    compact: unsupported,
    requestCompaction: unsupported,
    requestSnip: unsupported,
    pin: unsupported,
    unpin: unsupported,
    pins: unsupported,
    recordMetadata: unsupported,
    status: () => result([], quarterChars(kept)).status,
    entries: [],
    on: () => () => {},
  };
}

/**
 * BaseAgent's policy (an open-source agent; its context management follows OpenCode): usable = window − output reserve; at 85 % of it, prune old tool outputs
 * (scan backwards, protect the latest 40K tokens of output and the last 2 user turns, act only if ≥ 20K is
 * freed); still above, summarise everything into one message. The 40K / 20K constants were set for a 200K
 * window; they are scaled by usable / 168K so that the policy can work at 32K.
 */
export function createBaseAgentBaseline(window: number, maxOutputTokens: number): ContextManager {
  const usable = window - maxOutputTokens;
  const threshold = Math.floor(usable * 0.85);
  const scale = Math.min(1, usable / 168_000);
  const protect = 40_000 * scale;
  const minimum = 20_000 * scale;
  return baselineManager(threshold, async (messages, reports) => {
    let current = messages;
    let tokens = quarterChars(current);
    if (tokens <= threshold) return current;
    let turns = 0;
    let total = 0;
    let pruned = 0;
    const toPrune = new Set<ToolResultBlock>();
    for (let index = current.length - 1; index >= 0; index--) {
      const message = current[index]!;
      if (message.role === "user" && !message.content.some((block) => block.type === "tool_result")) turns++;
      if (turns < 2) continue;
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        const size = Math.ceil(resultChars(block) / 4);
        total += size;
        if (total > protect) {
          pruned += size;
          toPrune.add(block);
        }
      }
    }
    if (pruned > minimum) {
      current = current.map((message) =>
        withResults(message, (block) =>
          toPrune.has(block) ? "[Old tool result content cleared]" : undefined,
        ),
      );
      const after = quarterChars(current);
      reports.push(report("prune", tokens, after));
      tokens = after;
    }
    if (tokens <= threshold) return current;
    const summary = await summarize(current, Math.floor(usable * 0.15));
    const next = [
      createMessage(
        "user",
        `Another language model started to solve this problem and produced a summary of its thinking process. Here is the summary from the previous context:\n${summary.text}`,
      ),
    ];
    reports.push(report("summary", tokens, quarterChars(next), summary));
    return next;
  });
}

/**
 * The pipeline of learn-claude-code (a teaching re-implementation of Claude Code), every turn: tool-result budget (200K characters in
 * the last message), snip (over 50 messages keep 3 + 47), micro (all but the 3 most recent results longer
 * than 120 characters become a placeholder), then a summary of everything above the threshold (the same
 * threshold as ours, so only the ladder differs).
 */
export function createTeachingBaseline(window: number, maxOutputTokens: number): ContextManager {
  const threshold = createContextPolicy({ contextWindow: window, maxOutputTokens }, { env: {} }).evaluate(
    0,
  ).autoCompactThreshold;
  return baselineManager(threshold, async (messages, reports) => {
    const before = quarterChars(messages);
    let current = [...messages];
    const last = current.at(-1);
    if (last) {
      const blocks = last.content.filter((block): block is ToolResultBlock => block.type === "tool_result");
      let total = blocks.reduce((sum, block) => sum + resultChars(block), 0);
      const persisted = new Map<ToolResultBlock, string>();
      for (const block of [...blocks].sort((a, b) => resultChars(b) - resultChars(a))) {
        if (total <= 200_000) break;
        const replacement = `<persisted-output>\n${resultString(block).slice(0, 2_000)}\n</persisted-output>`;
        persisted.set(block, replacement);
        total -= resultChars(block) - replacement.length;
      }
      if (persisted.size > 0)
        current[current.length - 1] = withResults(last, (block) => persisted.get(block));
    }
    if (current.length > 50) {
      let headEnd = 3;
      let tailStart = current.length - 47;
      const hasUse = (message: Message | undefined) =>
        message?.content.some((block) => block.type === "tool_use") ?? false;
      const isResult = (message: Message | undefined) =>
        message?.content.some((block) => block.type === "tool_result") ?? false;
      if (hasUse(current[headEnd - 1]))
        while (headEnd < current.length && isResult(current[headEnd])) headEnd++;
      if (isResult(current[tailStart]) && hasUse(current[tailStart - 1])) tailStart--;
      if (tailStart > headEnd) {
        current = [
          ...current.slice(0, headEnd),
          createMessage("user", `[snipped ${tailStart - headEnd} messages from conversation middle]`),
          ...current.slice(tailStart),
        ];
      }
    }
    const recent = new Set(
      current.flatMap((message) => message.content.filter((block) => block.type === "tool_result")).slice(-3),
    );
    current = current.map((message) =>
      withResults(message, (block) =>
        !recent.has(block) && resultChars(block) > 120
          ? "[Earlier tool result compacted. Re-run if needed.]"
          : undefined,
      ),
    );
    const tokens = quarterChars(current);
    if (tokens < before) reports.push(report("micro", before, tokens));
    if (tokens <= threshold) return current;
    const summary = await summarize(current, Math.floor(threshold * 0.15));
    const next = [createMessage("user", `[Compacted]\n\n${summary.text}`)];
    reports.push(report("summary", tokens, quarterChars(next), summary));
    return next;
  });
}

/** The plain rule's settings. */
export const PLAIN_RULE = { capChars: 8_000, keepVerbatim: 10, workingSetTokens: 20_000 } as const;

const ERROR_LINE = /\b(?:error|exception|traceback|fail(?:ed|ure)?|fatal)\b/i;

/** One line for a tool call and its output: the call, then its first error line (else its first line). */
function plainRecord(call: string, text: string): string {
  const lines = text.split("\n").map((line) => line.trim());
  const error = lines.find((line) => ERROR_LINE.test(line));
  const first = error ?? lines.find((line) => line.length > 0) ?? "(empty)";
  return `[${call} → ${first.slice(0, 160)}; ${lines.length} lines, cleared]`;
}

/** Head and tail of a long output, with its first error line between them when the cut removed it. */
function capOutput(text: string, capChars: number): string {
  if (text.length <= capChars) return text;
  const half = Math.floor(capChars / 2) - 100;
  const head = text.slice(0, half);
  const tail = text.slice(-half);
  const error = text
    .slice(half, -half)
    .split("\n")
    .find((line) => ERROR_LINE.test(line));
  return `${head}\n[… ${text.length - 2 * half} characters cut${error ? `; first error: ${error.trim().slice(0, 300)}` : ""} …]\n${tail}`;
}

/**
 * A plain rule, measured on unseen sessions before the ladder's review (decision 0020): cap each new tool result
 * at 8,000 characters (head, tail and first error line); keep the last 10 results verbatim; once the context
 * passes 20K tokens, replace every older result with a one-line record, in one batch. It leaves user messages and assistant
 * text alone and has no summary, so after the provider refuses it has nothing to do (the call overflows).
 */
export function createPlainRuleBaseline(): ContextManager {
  let capped = 0;
  return baselineManager(
    PLAIN_RULE.workingSetTokens,
    (messages, reports) => {
      // Cap the results that arrived since the last call.
      let current = messages.map((message, index) => {
        if (index < capped) return message;
        if (isObservation(message)) {
          const text = observationText(message);
          return text.length > PLAIN_RULE.capChars
            ? { ...message, content: [{ type: "text" as const, text: capOutput(text, PLAIN_RULE.capChars) }] }
            : message;
        }
        return withResults(message, (block) => {
          const text = resultString(block);
          return text.length > PLAIN_RULE.capChars ? capOutput(text, PLAIN_RULE.capChars) : undefined;
        });
      });
      capped = current.length;
      const tokens = current.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
      if (tokens <= PLAIN_RULE.workingSetTokens) return current;
      // Every output older than the last ten becomes a record, in one batch.
      const calls = new Map<string, string>();
      for (const message of current)
        for (const block of message.content)
          if (block.type === "tool_use")
            calls.set(block.id, `${block.name}(${JSON.stringify(block.input ?? {}).slice(0, 80)})`);
      const outputs: { index: number; id?: string }[] = [];
      current.forEach((message, index) => {
        if (isObservation(message)) outputs.push({ index });
        for (const block of message.content)
          if (block.type === "tool_result") outputs.push({ index, id: block.tool_use_id });
      });
      const older = outputs.slice(0, Math.max(0, outputs.length - PLAIN_RULE.keepVerbatim));
      const ids = new Set(older.flatMap((output) => (output.id ? [output.id] : [])));
      const observations = new Set(older.flatMap((output) => (output.id ? [] : [output.index])));
      current = current.map((message, index) => {
        if (observations.has(index)) {
          const text = observationText(message);
          if (text.endsWith("cleared]")) return message;
          return { ...message, content: [{ type: "text" as const, text: plainRecord("observation", text) }] };
        }
        return withResults(message, (block) => {
          if (!ids.has(block.tool_use_id)) return undefined;
          const text = resultString(block);
          return text.endsWith("cleared]")
            ? undefined
            : plainRecord(calls.get(block.tool_use_id) ?? "tool", text);
        });
      });
      const after = current.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
      if (after < tokens) reports.push(report("records", tokens, after));
      return current;
    },
    { recover: "none" },
  );
}

/** The simple policy's settings. */
export const SIMPLE_POLICY = {
  capChars: 8_000,
  /** The ceiling, as a share of the window: 20K tokens at 200K. */
  ceilingShare: 0.1,
  /** Results kept verbatim between climbs (older ones are cleared by ski rental). */
  keepVerbatim: 10,
  /** Results kept verbatim at the floor. */
  floorKeep: 2,
  /** Assistant texts longer than this are cut at the floor. */
  floorTextChars: 200,
  /** Cache reads and writes as shares of the input price (the 5-minute cache). */
  read: 0.1,
  write: 1.25,
} as const;

/** An exit status the output states (`Exit code 2`, `exit status 1`), else "failed" for an error result, else none. */
function exitStatus(text: string, isError: boolean): string | undefined {
  const stated = /\bexit (?:code|status)[:= ]*(\d+)/i.exec(text);
  if (stated) return `exit ${stated[1]}`;
  return isError ? "failed" : undefined;
}

/** The simple policy's one-line record: the call, its exit status, its first error line (else its first line). */
function simpleRecord(call: string, text: string, isError: boolean): string {
  const lines = text.split("\n").map((line) => line.trim());
  const error = lines.find((line) => ERROR_LINE.test(line));
  const status = exitStatus(text, isError);
  const first = error ?? lines.find((line) => line.length > 0) ?? "(empty)";
  return `[${call}${status ? ` → ${status}` : ""}: ${first.slice(0, 160)}; ${lines.length} lines, cleared]`;
}

/** The calls whose results are cleared now or were before (their inputs may be cut at the floor). */
function clearedCalls(messages: readonly Message[], now: ReadonlySet<string>): Set<string> {
  const ids = new Set(now);
  for (const message of messages)
    for (const block of message.content)
      if (block.type === "tool_result" && isCleared(resultString(block))) ids.add(block.tool_use_id);
  return ids;
}

/** A call's input with every string over the floor's text limit cut (the same object when none is). */
function cutInput(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  let changed = false;
  const entries = Object.entries(input).map(([key, value]) => {
    if (typeof value !== "string" || value.length <= SIMPLE_POLICY.floorTextChars) return [key, value];
    changed = true;
    return [key, `${value.slice(0, SIMPLE_POLICY.floorTextChars)}…`];
  });
  return changed ? Object.fromEntries(entries) : input;
}

function isCleared(text: string): boolean {
  return text.startsWith("[") && text.endsWith("cleared]");
}

/**
 * A simple policy, measured on unseen long sessions before the working set's cap and floor (decision 0032):
 * (1) cap each new tool result at 8,000 characters (head, tail and first error line); (2) under a ceiling of 10 % of the window keep results
 * verbatim, and between climbs clear the results older than the newest ten only when the cache-read rent they
 * cost (0.1× their size each call) has added up to more than rewriting what follows them (ski rental); (3) past
 * the ceiling fall to a floor in one break: every result but the newest two becomes a one-line record with its
 * exit status and first error line, and assistant texts over 200 characters are cut (what the assistant wrote into the inputs of calls whose results are cleared counts as its text: a file written whole). It never touches the
 * user's messages and has no summary, so after the provider refuses it has nothing to do (the call overflows).
 */
export function createSimplePolicyBaseline(window: number): ContextManager {
  const ceiling = window * SIMPLE_POLICY.ceilingShare;
  let capped = 0;
  let rent = 0;
  return baselineManager(
    ceiling,
    (messages, reports) => {
      let current = messages.map((message, index) => {
        if (index < capped) return message;
        if (isObservation(message)) {
          const text = observationText(message);
          return text.length > SIMPLE_POLICY.capChars
            ? {
                ...message,
                content: [{ type: "text" as const, text: capOutput(text, SIMPLE_POLICY.capChars) }],
              }
            : message;
        }
        return withResults(message, (block) => {
          const text = resultString(block);
          return text.length > SIMPLE_POLICY.capChars ? capOutput(text, SIMPLE_POLICY.capChars) : undefined;
        });
      });
      capped = current.length;
      const sizes = current.map((message) => estimateMessageTokens(message));
      const tokens = sizes.reduce((sum, size) => sum + size, 0);
      const calls = new Map<string, string>();
      for (const message of current)
        for (const block of message.content)
          if (block.type === "tool_use")
            calls.set(block.id, `${block.name}(${JSON.stringify(block.input ?? {}).slice(0, 80)})`);
      // Every output not yet cleared, oldest first.
      const outputs: { index: number; id?: string; tokens: number }[] = [];
      current.forEach((message, index) => {
        if (isObservation(message)) {
          if (!isCleared(observationText(message))) outputs.push({ index, tokens: sizes[index]! });
          return;
        }
        for (const block of message.content)
          if (block.type === "tool_result" && !isCleared(resultString(block)))
            outputs.push({ index, id: block.tool_use_id, tokens: Math.ceil(resultChars(block) / 4) });
      });
      const clear = (older: typeof outputs, cutTexts: boolean, layer: string) => {
        const ids = new Set(older.flatMap((output) => (output.id ? [output.id] : [])));
        const clearedIds = cutTexts ? clearedCalls(current, ids) : ids;
        const observations = new Set(older.flatMap((output) => (output.id ? [] : [output.index])));
        current = current.map((message, index) => {
          if (observations.has(index))
            return {
              ...message,
              content: [
                { type: "text" as const, text: simpleRecord("observation", observationText(message), false) },
              ],
            };
          if (cutTexts && message.role === "assistant") {
            const cut = message.content.map((block) => {
              if (block.type === "text" && block.text.length > SIMPLE_POLICY.floorTextChars)
                return { ...block, text: `${block.text.slice(0, SIMPLE_POLICY.floorTextChars)}…` };
              // What the assistant wrote into a call's input (a file written whole) is its text too.
              if (block.type === "tool_use" && clearedIds.has(block.id)) {
                const input = cutInput(block.input);
                return input === block.input ? block : { ...block, input };
              }
              return block;
            });
            return cut.some((block, position) => block !== message.content[position])
              ? { ...message, content: cut }
              : message;
          }
          return withResults(message, (block) =>
            ids.has(block.tool_use_id)
              ? simpleRecord(
                  calls.get(block.tool_use_id) ?? "tool",
                  resultString(block),
                  block.is_error === true,
                )
              : undefined,
          );
        });
        const after = current.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
        if (after < tokens) reports.push(report(layer, tokens, after));
        rent = 0;
      };
      if (tokens > ceiling) {
        // The fall to the floor: one break.
        clear(outputs.slice(0, Math.max(0, outputs.length - SIMPLE_POLICY.floorKeep)), true, "floor");
        return current;
      }
      const older = outputs.slice(0, Math.max(0, outputs.length - SIMPLE_POLICY.keepVerbatim));
      if (older.length === 0) return current;
      // Ski rental: clear once the rent paid on them reaches the price of writing again what follows them.
      const suffix = sizes.slice(older[0]!.index).reduce((sum, size) => sum + size, 0);
      if (rent >= (SIMPLE_POLICY.write - SIMPLE_POLICY.read) * suffix) {
        clear(older, false, "records");
        return current;
      }
      rent += SIMPLE_POLICY.read * older.reduce((sum, output) => sum + output.tokens, 0);
      return current;
    },
    { recover: "none" },
  );
}
