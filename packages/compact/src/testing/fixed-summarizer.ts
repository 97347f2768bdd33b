import type { Summarizer } from "../summary/summarizer.ts";

/**
 * A summariser that writes the same text every time, whatever the conversation held: for tests that show that
 * what must survive a compaction (the user's messages, the open errors, the latest call) is carried by the ladder
 * itself, not by what a summariser chose to write. It reports no tokens and no model calls.
 */
export function fixedSummarizer(text: string): Summarizer {
  return {
    name: "fixed",
    async summarize() {
      return { text, inputTokens: 0, outputTokens: 0, calls: 0 };
    },
  };
}
