import type { Message } from "@unforget/core";
import { projectMessages, type TranscriptEntry, toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import type { ContextManager } from "../context-manager.ts";
import { replayConversation } from "../replay-conversation.ts";

export interface PipelineContractOptions {
  /** Shown in test names. */
  name: string;
  /** Creates the manager under test for a window, with the replay's clock. */
  createManager(context: { window: number; clock: () => number }): ContextManager;
  /** Recorded conversations to replay (e.g. every corpus session, imported). */
  sessions: readonly { name: string; messages: readonly Message[] }[];
  /** Windows to replay at; default 16,000, 32,000 and 200,000 tokens. */
  windows?: readonly number[];
}

/**
 * The conformance suite of a whole ladder: every session replayed call by call at every window must give
 * requests that never exceed the window, never orphan a tool_use or tool_result, alternate roles, keep each
 * of the user's messages (verbatim or in a summary), and project from the transcript to the live request.
 */
export function describeContextManagerContract(options: PipelineContractOptions): void {
  const windows = options.windows ?? [16_000, 32_000, 200_000];
  describe(`context manager contract: ${options.name}`, () => {
    for (const session of options.sessions) {
      for (const window of windows) {
        it(`replays ${session.name} at ${window} tokens with no overflow and no violation`, async () => {
          let manager: ContextManager | undefined;
          const { stats, calls } = await replayConversation(session.messages, {
            window,
            createManager: (clock) => {
              manager = options.createManager({ window, clock });
              return manager;
            },
          });
          expect(stats.violations).toEqual([]);
          expect(stats.overflows).toBe(0);
          expect(stats.peakTokens).toBeLessThanOrEqual(window);
          expect(calls.length).toBeGreaterThan(0);
          const entries = JSON.parse(JSON.stringify(manager!.entries)) as TranscriptEntry[];
          expect(JSON.stringify(toRequestMessages(projectMessages(entries)))).toBe(
            JSON.stringify(calls.at(-1)!.messages),
          );
        });
      }
    }
  });
}
