import { setTimeout as sleep } from "node:timers/promises";
import {
  type ContextEvent,
  type ContextManagerConfig,
  createContextManager,
  createExtractiveSummarizer,
  replayConversation,
  type Summarizer,
} from "../src/index.ts";
import type { CorpusSession } from "./replay-corpus.ts";
import { maxOutput } from "./replay-corpus.ts";

/**
 * Background summaries on a real clock. Each model call of the replay takes `callMs` of real time (the model
 * answering), and the summariser is a fake model that takes `summaryMs` (it writes the extractive summary,
 * then waits). Waits are measured with `performance.now`, never with the replay's recorded clock.
 */
export interface BackgroundRun {
  /** Summaries started in the background, spliced in, and thrown away. */
  started: number;
  applied: number;
  discarded: number;
  /** Why they were thrown away, and how often. */
  discardReasons: Map<string, number>;
  /** Summaries written in the foreground (nothing ready at the threshold). */
  foreground: number;
  /** Real milliseconds each summary at the threshold kept the call waiting (a foreground summary: all of it). */
  waits: number[];
  /** Real milliseconds of each foreground summary. */
  foregroundMs: number[];
  overflows: number;
}

export interface BackgroundOptions {
  window: number;
  callMs: number;
  summaryMs: number;
  config?: ContextManagerConfig;
}

/** A fake summary model: the extractive summary, after `ms` of real time. */
function slowSummarizer(ms: number): Summarizer {
  const extractive = createExtractiveSummarizer();
  return {
    name: "slow-model",
    async summarize(request) {
      const result = await extractive.summarize(request);
      await sleep(ms);
      return { ...result, calls: 1 };
    },
  };
}

export async function runBackground(
  sessions: readonly CorpusSession[],
  options: BackgroundOptions,
): Promise<BackgroundRun> {
  const run: BackgroundRun = {
    started: 0,
    applied: 0,
    discarded: 0,
    discardReasons: new Map(),
    foreground: 0,
    waits: [],
    foregroundMs: [],
    overflows: 0,
  };
  let ids = 0;
  // Each automatic summary's real duration, and whether it came from the background.
  const summaries: { durationMs: number; background: boolean }[] = [];
  for (const session of sessions) {
    const { stats } = await replayConversation(session.messages, {
      window: options.window,
      ...(session.system ? { system: session.system } : {}),
      createManager: (clock) =>
        createContextManager({
          model: "replay",
          limits: { contextWindow: options.window, maxOutputTokens: maxOutput(options.window) },
          clock,
          idFactory: (kind) => `${kind}-${++ids}`,
          summarizer: slowSummarizer(options.summaryMs),
          ...(options.config ? { config: options.config } : {}),
          onEvent: (event: ContextEvent) => {
            if (event.type === "background-started") run.started++;
            else if (event.type === "background-applied") {
              // Reported right after the summary it spliced in.
              run.applied++;
              run.waits.push(event.waitedMs);
              const last = summaries.at(-1);
              if (last) last.background = true;
            } else if (event.type === "background-discarded") {
              run.discarded++;
              run.discardReasons.set(event.reason, (run.discardReasons.get(event.reason) ?? 0) + 1);
            } else if (event.type === "layer" && event.layer === "summary" && event.trigger === "auto") {
              summaries.push({ durationMs: event.durationMs, background: false });
            }
          },
        }),
      // The model answering: real time passes between two calls.
      onCall: () => sleep(options.callMs),
    });
    run.overflows += stats.overflows;
  }
  // A summary at the threshold that was not spliced in from the background kept the call waiting for all of it.
  for (const summary of summaries) {
    if (summary.background) continue;
    run.foreground++;
    run.foregroundMs.push(summary.durationMs);
    run.waits.push(summary.durationMs);
  }
  return run;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
