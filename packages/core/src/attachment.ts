import type { ContentBlock } from "./message.ts";

/** Context added to the conversation outside the user's own words: memory, a file, a plan, task status, hook output. */
export interface Attachment {
  /** What kind of context this is ("memory-index", "file", "plan", "task-status", "hook-context", …). */
  kind: string;
  content: string | ContentBlock[];
  /** Who produced it (plugin name, memory file path, hook command). */
  source?: string;
  metadata?: Record<string, unknown>;
}
