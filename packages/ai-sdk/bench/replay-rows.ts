import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ContextManager,
  type ContextStatus,
  compactablePredicate,
  createContextManager,
  type LayerReport,
  type PrepareResult,
  type ResultRetentionSetting,
  replayConversation,
} from "@unforget/compact";
import type { Message, RequestMessage } from "@unforget/core";
import {
  type CorpusSession,
  chainSessions,
  loadSessions,
  maxOutput,
} from "../../compact/bench/replay-corpus.ts";

/**
 * The adapters' rows of the compaction replay: the same corpus sessions and windows as packages/compact/bench
 * (its `loadSessions` / `chainSessions`), replayed with `replayConversation`, each policy working in its host
 * library's own messages. What a row sends is converted back to Unforget messages only to be counted, the same
 * way for every row.
 */

export type { CorpusSession };
export { chainSessions, loadSessions };

/** One call of a host policy: the conversation so far (Unforget messages, with usage) → what it sends. */
export interface HostStep {
  /** The messages sent, as Unforget request messages (for counting). */
  messages: RequestMessage[];
  /** What the policy did at this call (a summary is one with `summarizer` set). */
  actions: LayerReport[];
  /**
   * Blocks the replay puts the settled breakpoint after (`PrepareResult.settledBlocks`), for a policy whose
   * messages carry none of their own: the ladder's own row, as a provider loop sends it.
   */
  settledBlocks?: number;
}

/** A policy under test: created per session and window, called before every model call. */
export interface HostPolicy {
  name: string;
  create(
    window: number,
    clock: () => number,
  ): {
    prepare(history: readonly Message[]): Promise<HostStep>;
    /** After an overflow (a prompt-too-long error); absent when the host's loop has no reactive path. */
    recover?(error: unknown): Promise<HostStep>;
  };
}

export interface RowTotals {
  calls: number;
  overflows: number;
  peak: number;
  summaries: number;
  inputCost: number;
  prefixReuse: number;
  /** User messages still in the last request (verbatim or quoted), and how many there were. */
  usersKept: number;
  users: number;
}

/** The ladder's threshold for a window, as the replay's managers compute it. */
export function thresholdFor(window: number): number {
  return createContextManager({
    model: "replay",
    limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
  }).status().threshold;
}

/** A user's own message (not a tool result, not a meta message), as the replay counts them. */
function isUserAuthored(message: Message): boolean {
  if (message.role !== "user" || message.isMeta || message.isCompactSummary || message.isObservation)
    return false;
  return message.content.some((block) => block.type === "text" && block.text.trim().length > 0);
}

/** Wraps a host policy as the `ContextManager` the replay drives (prepare, recover, status; nothing else is used). */
function asManager(policy: ReturnType<HostPolicy["create"]>, threshold: number): ContextManager {
  const status: ContextStatus = {
    tokens: 0,
    contextWindow: 0,
    effectiveWindow: 0,
    threshold,
    blockingLimit: threshold,
    percentUsed: 0,
    turnsUntilCompaction: undefined,
    compactions: 0,
    recompactionChain: 0,
    failures: {},
  };
  const result = (step: HostStep): PrepareResult => ({
    messages: step.messages,
    projected: [],
    ...(step.settledBlocks !== undefined ? { settledBlocks: step.settledBlocks } : {}),
    tokensBefore: 0,
    tokens: 0,
    actions: step.actions,
    status,
  });
  const unsupported = () => {
    throw new Error("not used by the replay");
  };
  return {
    async prepare(messages) {
      return result(await policy.prepare(messages));
    },
    async recover(error) {
      if (!policy.recover) throw error;
      return result(await policy.recover(error));
    },
    compact: unsupported,
    requestCompaction: unsupported,
    requestSnip: unsupported,
    pin: unsupported,
    unpin: unsupported,
    pins: unsupported,
    recordMetadata: unsupported,
    status: () => status,
    entries: [],
    layers: [],
    on: () => () => {},
  };
}

/** Replays every session through a policy at a window and sums what the table shows. */
export async function replayRow(
  sessions: readonly CorpusSession[],
  policy: HostPolicy,
  window: number,
): Promise<RowTotals> {
  const totals: RowTotals = {
    calls: 0,
    overflows: 0,
    peak: 0,
    summaries: 0,
    inputCost: 0,
    prefixReuse: 0,
    usersKept: 0,
    users: 0,
  };
  let prefix = 0;
  let requested = 0;
  const threshold = thresholdFor(window);
  for (const session of sessions) {
    const { stats, calls } = await replayConversation(session.messages, {
      window,
      ...(session.system ? { system: session.system } : {}),
      createManager: (clock) => asManager(policy.create(window, clock), threshold),
    });
    totals.calls += stats.calls;
    totals.overflows += stats.overflows;
    totals.peak = Math.max(totals.peak, stats.peakTokens);
    totals.summaries += stats.summarizerCalls;
    totals.inputCost += stats.inputCost;
    for (const call of calls.slice(1)) {
      prefix += call.prefixTokens;
      requested += call.tokens;
    }
    // The last call has seen every user message before the last response; the replay lists those it could not find.
    const last = calls[calls.length - 1];
    const lastResponse = session.messages.findLastIndex((message) => message.role === "assistant");
    const users = session.messages.slice(0, Math.max(0, lastResponse)).filter(isUserAuthored).length;
    const lost =
      last?.violations.filter((violation) => violation.startsWith("the user's message")).length ?? 0;
    totals.users += users;
    totals.usersKept += users - lost;
  }
  totals.prefixReuse = requested === 0 ? 1 : prefix / requested;
  return totals;
}

/** The session sets and windows of the compaction benchmark. */
export function sessionSets(): [label: string, sessions: CorpusSession[], window: number][] {
  const corpus = loadSessions();
  const long = chainSessions(corpus);
  return [
    ["every corpus session", corpus, 16_000],
    ["every corpus session", corpus, 32_000],
    ["long sessions (each source's sessions back to back)", long, 16_000],
    ["long sessions (each source's sessions back to back)", long, 32_000],
  ];
}

const pct = (value: number) => `${(value * 100).toFixed(1)} %`;

/** Prints one markdown table per session set and window, every row of `policies`, ratios against the first. */
export async function printReplayTables(policies: readonly HostPolicy[]): Promise<void> {
  for (const [label, sessions, window] of sessionSets()) {
    console.log(
      `\n#### Replay of ${label} at ${window.toLocaleString("en-US")} tokens (${sessions.length} sessions)\n`,
    );
    console.log(
      "| policy | calls | overflows | peak | summaries | prefix reuse | input cost | vs first row | user messages kept |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let first: RowTotals | undefined;
    for (const policy of policies) {
      const row = await replayRow(sessions, policy, window);
      first ??= row;
      console.log(
        `| ${policy.name} | ${row.calls} | ${row.overflows} | ${row.peak.toLocaleString("en-US")} | ${row.summaries} | ${pct(row.prefixReuse)} | ${row.inputCost.toLocaleString("en-US")} | ${(row.inputCost / Math.max(1, first.inputCost)).toFixed(2)}× | ${row.usersKept} of ${row.users} |`,
      );
    }
  }
}

/** Median and 95th percentile of a list of timings. */
function percentiles(values: readonly number[]): { median: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor(sorted.length / 2)] ?? 0,
    p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0,
  };
}

/** The ladder itself, the row every adapter row is read against: its requests carry the settled breakpoint. */
export const nativeLadder: HostPolicy = {
  name: "unforget (default ladder)",
  create(window, clock) {
    const manager = createContextManager({
      model: "replay",
      limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
      clock,
    });
    const step = (prepared: PrepareResult): HostStep => ({
      messages: prepared.messages,
      actions: prepared.actions,
      ...(prepared.settledBlocks !== undefined ? { settledBlocks: prepared.settledBlocks } : {}),
    });
    return {
      prepare: async (history) => step(await manager.prepare(history)),
      recover: async (error) => step(await manager.recover(error)),
    };
  },
};

const folders: string[] = [];

/** A fresh session folder, removed when the process exits. */
function benchFolder(): string {
  if (folders.length === 0)
    process.once("exit", () => {
      for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    });
  const folder = mkdtempSync(join(tmpdir(), "unforget-bench-"));
  folders.push(folder);
  return folder;
}

/** The prefix of the renamed tools: no tool name the ladder knows starts with it. */
const CUSTOM = "custom_";
const wellKnown = compactablePredicate();

/**
 * What a host would say of the renamed tools (`resultRetention`): reproducible exactly when the tool it renames
 * is one the ladder knows as such, so that only the names differ from the first row.
 */
export const renamedRetention: ResultRetentionSetting = (name) =>
  name.startsWith(CUSTOM) && wellKnown(name.slice(CUSTOM.length)) ? "reproducible" : undefined;

/**
 * A host policy run on the same sessions with every tool renamed (`Bash` → `custom_Bash`): no name is one the
 * ladder knows, so what happens to the results is what the host says (`create` gets a fresh session folder
 * when `withFolder`; removed when the process exits).
 */
export function withRenamedTools(
  name: string,
  create: (
    window: number,
    clock: () => number,
    sessionDir: string | undefined,
  ) => ReturnType<HostPolicy["create"]>,
  withFolder = false,
): HostPolicy {
  return {
    name,
    create(window, clock) {
      const sessionDir = withFolder ? benchFolder() : undefined;
      const inner = create(window, clock, sessionDir);
      const renamed = new WeakMap<Message, Message>();
      const rename = (message: Message): Message => {
        let copy = renamed.get(message);
        if (!copy) {
          copy = message.content.some((block) => block.type === "tool_use")
            ? {
                ...message,
                content: message.content.map((block) =>
                  block.type === "tool_use" ? { ...block, name: `${CUSTOM}${block.name}` } : block,
                ),
              }
            : message;
          renamed.set(message, copy);
        }
        return copy;
      };
      return {
        prepare: (history) => inner.prepare(history.map(rename)),
        ...(inner.recover ? { recover: inner.recover } : {}),
      };
    },
  };
}

/** Prints the overhead table: the adapter's step, the manager alone on the same conversation, their difference. */
export function printOverhead(
  title: string,
  step: string,
  adapter: readonly number[],
  bare: readonly number[],
): void {
  const fmt = (value: number) => value.toFixed(3);
  const a = percentiles(adapter);
  const b = percentiles(bare);
  console.log(`#### ${title}\n`);
  console.log("| measure | median | p95 |");
  console.log("| --- | --- | --- |");
  console.log(`| ${step} (adapter + ContextManager.prepare) | ${fmt(a.median)} ms | ${fmt(a.p95)} ms |`);
  console.log(`| ContextManager.prepare alone, same conversation | ${fmt(b.median)} ms | ${fmt(b.p95)} ms |`);
  console.log(`| the adapter's own overhead (difference of medians) | ${fmt(a.median - b.median)} ms | |`);
}

/** The per-step table of `custom-tool-steps.ts`: one row per clock, the steps whose request held 60K tokens or more. */
export function printCustomToolSteps(
  title: string,
  step: string,
  runs: readonly { clock: string; times: readonly number[]; saved: number; steps: number }[],
): void {
  console.log(`#### ${title}\n`);
  console.log(`| clock | ${step} median | p95 | steps measured (of all) | outputs saved |`);
  console.log("| --- | --- | --- | --- | --- |");
  for (const run of runs) {
    const { median, p95 } = percentiles(run.times);
    console.log(
      `| ${run.clock} | ${median.toFixed(3)} ms | ${p95.toFixed(3)} ms | ${run.times.length} (of ${run.steps}) | ${run.saved} |`,
    );
  }
}
