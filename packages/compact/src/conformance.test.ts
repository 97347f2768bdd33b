import type { Message } from "@unforget/core";
import {
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
} from "@unforget/importers";
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing/corpus";
import { collapseContext } from "./collapse-context.ts";
import { createContextManager } from "./context-manager.ts";
import { microcompact } from "./microcompact.ts";
import { maskObservations } from "./observation-masking.ts";
import { snipCompact } from "./snip-compact.ts";
import { describeContextManagerContract, describeLayerContract } from "./testing/index.ts";
import { applyToolResultBudget } from "./tool-result-budget.ts";

/** Every corpus session, imported, main conversation only. */
function corpusSessions(): { name: string; messages: Message[] }[] {
  const sessions: { name: string; messages: Message[] }[] = [];
  for (const session of listCorpusSessions()) {
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

const sessions = corpusSessions();

describeLayerContract(
  {
    name: "tool-result-budget",
    run: (messages, { dir }) => applyToolResultBudget(messages, { sessionDir: dir, maxResultChars: 4_000 }),
  },
  { sessions },
);
describeLayerContract(
  {
    name: "tool-result-budget (middle cut)",
    run: (messages) => applyToolResultBudget(messages, { maxResultChars: 4_000 }),
  },
  { sessions },
);
describeLayerContract(
  { name: "snip", run: (messages, { now }) => snipCompact(messages, { maxMessages: 8, keepHead: 2, now }) },
  { sessions },
);
describeLayerContract(
  { name: "microcompact (time)", run: (messages, { now }) => microcompact(messages, { now, keepRecent: 2 }) },
  { sessions },
);
describeLayerContract(
  {
    name: "microcompact (prune)",
    run: (messages, { now }) =>
      microcompact(messages, { strategy: "prune", protectTokens: 500, minimumFreedTokens: 100, now }),
  },
  { sessions },
);
describeLayerContract(
  { name: "collapse", run: (messages, { now }) => collapseContext(messages, { protectRounds: 1, now }) },
  { sessions },
);
describeLayerContract(
  { name: "collapse (drain)", run: (messages, { now }) => collapseContext(messages, { drain: true, now }) },
  { sessions },
);
describeLayerContract(
  {
    name: "observation masking",
    run: (messages, { now }) => maskObservations(messages, { keepLast: 2, now }),
  },
  { sessions },
);

let counter = 0;
describeContextManagerContract({
  name: "default ladder, offline",
  sessions,
  createManager: ({ window, clock }) =>
    createContextManager({
      model: "replay",
      limits: { contextWindow: window, maxOutputTokens: Math.min(8_000, Math.floor(window / 4)) },
      clock,
      idFactory: (kind) => `${kind}-${++counter}`,
    }),
});
