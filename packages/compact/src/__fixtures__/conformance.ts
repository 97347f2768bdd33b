import type { Message } from "@unforget/core";
import {
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
} from "@unforget/importers";
import { type Corpus, loadCorpusFile } from "@unforget/testing/corpus";
import { expect } from "vitest";
import { collapseContext, createCollapseLayer } from "../layers/collapse-context.ts";
import { createMicrocompactLayer, microcompact } from "../layers/microcompact.ts";
import { createObservationMaskingLayer } from "../layers/observation-masking.ts";
import { createSnipLayer, snipCompact } from "../layers/snip-compact.ts";
import { applyToolResultBudget, createToolResultBudgetLayer } from "../layers/tool-result-budget.ts";
import { createContextManager } from "../manager/context-manager.ts";
import { describeContextManagerContract, describeLayerContract, layerUnderTest } from "../testing/index.ts";

/** Every session of `corpus`, imported, main conversation only. */
function corpusSessions(corpus: Corpus): { name: string; messages: Message[] }[] {
  const sessions: { name: string; messages: Message[] }[] = [];
  for (const session of corpus.sessions) {
    const text = loadCorpusFile(session.path);
    let messages: Message[] | undefined;
    try {
      if (session.format === "swe-agent") messages = importSweAgentTrajectory(text).messages;
      else if (session.format === "mini-swe-agent") messages = importMiniSweAgentTrajectory(text).messages;
      else if (session.format === "openhands") messages = importOpenHandsTrajectory(text).messages;
      else if (session.format === "claude-code") messages = importClaudeCodeTranscript(text).messages;
    } catch {
      messages = undefined;
    }
    if (messages && messages.length > 1) sessions.push({ name: session.relativePath, messages });
  }
  return sessions;
}

/**
 * Every layer of the ladder (with its default settings and with others) and the whole offline ladder against
 * their contracts, on generated conversations and on every session of `corpus`; with `recordedOnly`, on the
 * sessions alone (the evaluation suite, beside the unit suite that runs the rest).
 */
export function describeConformance(corpus: Corpus, { recordedOnly = false } = {}): void {
  const sessions = corpusSessions(corpus);
  expect(sessions.length, `importable sessions in ${corpus.dir}`).toBeGreaterThan(0);

  // The ladder's own layers, as the manager runs them (due in a batch, at a small threshold).
  for (const layer of [
    createToolResultBudgetLayer(),
    createMicrocompactLayer(),
    createObservationMaskingLayer({ keepLast: 2 }),
    createSnipLayer({ maxMessages: 8, keepHead: 2 }),
    createCollapseLayer({ protectRounds: 1 }),
  ]) {
    describeLayerContract(layerUnderTest(layer), { sessions, recordedOnly });
  }

  // The layer functions with settings the ladder does not use by default.
  describeLayerContract(
    {
      name: "tool-result-budget (middle cut, no session folder)",
      run: (messages) =>
        applyToolResultBudget(messages, { maxResultChars: 4_000, maxUserMessageChars: 8_000 }),
      cutsNewestTurn: true,
    },
    { sessions, recordedOnly },
  );
  describeLayerContract(
    {
      name: "microcompact (time)",
      run: (messages, { now }) => microcompact(messages, { now, keepRecent: 0 }),
    },
    { sessions, recordedOnly },
  );
  describeLayerContract(
    {
      name: "microcompact (prune)",
      run: (messages, { now }) =>
        microcompact(messages, { strategy: "prune", protectTokens: 500, minimumFreedTokens: 100, now }),
    },
    { sessions, recordedOnly },
  );
  describeLayerContract(
    { name: "collapse (drain)", run: (messages, { now }) => collapseContext(messages, { drain: true, now }) },
    { sessions, recordedOnly },
  );
  describeLayerContract(
    {
      name: "snip (the snip tool)",
      run: (messages, { now }) => snipCompact(messages, { maxMessages: 3, keepHead: 1, keepTail: 2, now }),
    },
    { sessions, recordedOnly },
  );

  let counter = 0;
  // The same ladder keeping in memory only the entries the context is projected from: every guarantee holds.
  for (const [name, retainEntries] of [
    ["default ladder, offline", "all"],
    ["default ladder, offline, retaining the context's entries only", "context"],
  ] as const) {
    describeContextManagerContract({
      name,
      sessions,
      recordedOnly,
      createManager: ({ window, options }) =>
        createContextManager({
          model: "replay",
          limits: { contextWindow: window, maxOutputTokens: Math.min(8_000, Math.floor(window / 4)) },
          idFactory: (kind) => `${kind}-${++counter}`,
          retainEntries,
          ...options,
        }),
    });
  }
}
