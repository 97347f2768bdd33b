import type { Message } from "@unforget/core";
import {
  importClaudeCodeTranscript,
  importMiniSweAgentTrajectory,
  importOpenHandsTrajectory,
  importSweAgentTrajectory,
} from "@unforget/importers";
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing/corpus";
import {
  type ContextEvent,
  type ContextManager,
  type ContextManagerConfig,
  createContextManager,
  type ReplayStats,
  replayConversation,
} from "../src/index.ts";
import { createBaseAgentBaseline, createTeachingBaseline } from "./baselines.ts";

export interface CorpusSession {
  name: string;
  messages: Message[];
  system?: string;
}

/** Every corpus session, imported, with its system prompt when the format records one. */
export function loadSessions(): CorpusSession[] {
  const sessions: CorpusSession[] = [];
  for (const session of listCorpusSessions()) {
    const text = loadCorpusFile(session.path);
    try {
      let result: { messages: Message[]; system?: string } | undefined;
      if (session.format === "swe-agent") result = importSweAgentTrajectory(text);
      else if (session.format === "mini-swe-agent") result = importMiniSweAgentTrajectory(text);
      else if (session.format === "openhands") result = importOpenHandsTrajectory(text);
      else if (session.format === "claude-code") result = importClaudeCodeTranscript(text);
      if (result && result.messages.length > 1) {
        const messages = result.messages;
        sessions.push({
          name: session.relativePath,
          messages,
          ...(typeof result.system === "string" ? { system: result.system } : {}),
        });
      }
    } catch {
      // A file the importers refuse is not a session to replay.
    }
  }
  return sessions;
}

/**
 * Long sessions from the short ones: the sessions of one source format run back to back, as one agent working
 * through several tasks in one session (ids prefixed so they stay unique, times shifted so they keep
 * increasing, with a five-minute pause between tasks). The corpus has no session longer than ~40 calls;
 * these reach the hundreds, where the ladder's policies differ.
 */
export function chainSessions(sessions: readonly CorpusSession[]): CorpusSession[] {
  const groups = new Map<string, CorpusSession[]>();
  for (const session of sessions) {
    const group = session.name.split("/")[0]!;
    groups.set(group, [...(groups.get(group) ?? []), session]);
  }
  const chained: CorpusSession[] = [];
  for (const [group, members] of groups) {
    if (members.length < 2) continue;
    const messages: Message[] = [];
    let clock = Date.UTC(2026, 0, 1);
    members.forEach((member, index) => {
      const first = Date.parse(member.messages[0]?.timestamp ?? "") || 0;
      for (const message of member.messages) {
        const time = Date.parse(message.timestamp);
        const shifted = clock + (Number.isFinite(time) && first > 0 ? Math.max(0, time - first) : 1_000);
        messages.push(renumber(message, `s${index}-`, shifted));
      }
      const last = Date.parse(messages[messages.length - 1]?.timestamp ?? "") || clock;
      clock = last + 5 * 60_000;
    });
    const system = members.find((member) => member.system)?.system;
    chained.push({
      name: `${group} (all ${members.length} sessions back to back)`,
      messages,
      ...(system ? { system } : {}),
    });
  }
  return chained;
}

function renumber(message: Message, prefix: string, time: number): Message {
  return {
    ...message,
    id: `${prefix}${message.id}`,
    timestamp: new Date(time).toISOString(),
    ...(message.responseId ? { responseId: `${prefix}${message.responseId}` } : {}),
    content: message.content.map((block) =>
      block.type === "tool_use"
        ? { ...block, id: `${prefix}${block.id}` }
        : block.type === "tool_result"
          ? { ...block, tool_use_id: `${prefix}${block.tool_use_id}` }
          : block,
    ),
  };
}

export interface PolicyTotals extends Omit<ReplayStats, "window" | "violations" | "prefixReuse"> {
  prefixTokens: number;
  requestTokens: number;
  violations: number;
  sessions: number;
  /** Total time callers waited for a summary at the threshold (background summaries that were not ready). */
  waitedMs: number;
}

export type Policy = { name: string; create: (window: number, clock: () => number) => ContextManager };

export function policies(config: ContextManagerConfig = {}): Policy[] {
  let ids = 0;
  const ours = (name: string, extra: ContextManagerConfig): Policy => ({
    name,
    create: (window, clock) =>
      createContextManager({
        model: "replay",
        limits: { contextWindow: window, maxOutputTokens: maxOutput(window) },
        clock,
        idFactory: (kind) => `${kind}-${++ids}`,
        config: { ...config, ...extra },
      }),
  });
  return [
    ours("unforget (default ladder)", {}),
    ours("unforget + observation masking", { observationMasking: { keepLast: 10 } }),
    {
      name: "baseline: BaseAgent prune → summary at 85 %",
      create: (window) => createBaseAgentBaseline(window, maxOutput(window)),
    },
    {
      name: "baseline: teaching budget + snip + micro + summary",
      create: (window) => createTeachingBaseline(window, maxOutput(window)),
    },
  ];
}

export const maxOutput = (window: number) => Math.min(8_000, Math.floor(window / 4));

/** Replays every session through a policy at a window and sums the statistics. */
export async function replayAll(
  sessions: readonly CorpusSession[],
  policy: Policy,
  window: number,
): Promise<PolicyTotals> {
  const totals: PolicyTotals = {
    calls: 0,
    peakTokens: 0,
    overflows: 0,
    layers: {} as PolicyTotals["layers"],
    summarizerCalls: 0,
    summarizerInputTokens: 0,
    inputCost: 0,
    slidingWindowInputCost: 0,
    prefixTokens: 0,
    requestTokens: 0,
    violations: 0,
    sessions: 0,
    waitedMs: 0,
  };
  for (const session of sessions) {
    const { stats, calls } = await replayConversation(session.messages, {
      window,
      ...(session.system ? { system: session.system } : {}),
      createManager: (clock) => {
        const manager = policy.create(window, clock);
        manager.on((event: ContextEvent) => {
          if (event.type === "background-applied") totals.waitedMs += event.waitedMs;
        });
        return manager;
      },
    });
    totals.sessions++;
    totals.calls += stats.calls;
    totals.peakTokens = Math.max(totals.peakTokens, stats.peakTokens);
    totals.overflows += stats.overflows;
    totals.summarizerCalls += stats.summarizerCalls;
    totals.summarizerInputTokens += stats.summarizerInputTokens;
    totals.inputCost += stats.inputCost;
    totals.slidingWindowInputCost += stats.slidingWindowInputCost;
    totals.violations += stats.violations.length;
    for (const call of calls.slice(1)) {
      totals.prefixTokens += call.prefixTokens;
      totals.requestTokens += call.tokens;
    }
    for (const [layer, value] of Object.entries(stats.layers)) {
      const current = (totals.layers as Record<string, { runs: number; tokensFreed: number }>)[layer] ?? {
        runs: 0,
        tokensFreed: 0,
      };
      current.runs += value.runs;
      current.tokensFreed += value.tokensFreed;
      (totals.layers as Record<string, { runs: number; tokensFreed: number }>)[layer] = current;
    }
  }
  return totals;
}
