import type { Message } from "@unforget/core";
import type { DreamJob, MemoryStore, ProposalQueue, SessionMemory } from "@unforget/memory";
import type { TranscriptEntry } from "@unforget/transcript";
import { backgroundModel } from "../context/summarizer-model.ts";
import type { AgentSessionOptions } from "../loop/agent-session-options.ts";
import { errorText } from "../loop/session-errors.ts";
import type { SessionRuntime } from "../loop/session-runtime.ts";

// Memory on a session's hook bus (`attachMemory` of `@unforget/memory`, loaded when the session has memory), and
// where a resumed session's extraction stopped.

/**
 * Wires memory on the runtime's bus: extraction (from where it stopped), recall, proposals and dreams, as the
 * options give them. Returns its background work, awaited when the runtime closes.
 */
export function attachSessionMemory(
  runtime: SessionRuntime,
  attachMemory: typeof import("@unforget/memory").attachMemory,
  memory: NonNullable<AgentSessionOptions["memory"]>,
  through: string | undefined,
): { idle(): Promise<void> } {
  // Until extraction has read past it, what follows `through` stays in the session's memory (`trimConversation`).
  runtime.extractedThrough = through;
  // The options' types are what the session itself needs; what it is given are @unforget/memory's objects.
  return attachMemory(runtime.hooks, {
    ...(through === undefined ? {} : { extractedThrough: through }),
    // Where extraction stopped goes into the transcript, so that a resumed session does not read it again.
    onExtracted: (id) => {
      // The session keeps what follows it in memory until then (`trimConversation`).
      runtime.extractedThrough = id;
      return runtime.transcript.appendEntry({ type: "metadata", data: { [EXTRACTED_THROUGH]: id } });
    },
    // No larger than half the agent's own largest request (the compaction threshold), whatever the session's length.
    extractionInputTokens: () => Math.floor(runtime.manager.status().threshold / 2),
    sessionId: runtime.sessionId,
    store: memory.store as MemoryStore,
    getMessages: () => runtime.conversation,
    ...backgroundModel(runtime.options, runtime.model),
    ...(memory.consent ? { consent: memory.consent } : {}),
    ...(memory.proposals ? { proposals: memory.proposals as ProposalQueue } : {}),
    ...(memory.recall ? { recall: memory.recall } : {}),
    ...(memory.dream ? { dream: memory.dream as DreamJob } : {}),
    ...(runtime.notes ? { sessionMemory: runtime.notes as SessionMemory } : {}),
    onError: (error) => runtime.emit({ type: "hook-error", message: `Memory: ${errorText(error)}` }),
  });
}

/** The metadata key of the memory extraction's cursor (the id of the last message it read). */
const EXTRACTED_THROUGH = "memoryExtractedThrough";

/**
 * Where a resumed session's memory extraction stopped: the furthest message any cursor entry names (entries
 * re-appended after a compaction may repeat an older one).
 */
export function extractedThrough(
  entries: readonly TranscriptEntry[],
  conversation: readonly Message[],
): string | undefined {
  const position = new Map(conversation.map((message, index) => [message.id, index]));
  let furthest: string | undefined;
  for (const entry of entries) {
    const id = entry.type === "metadata" ? entry.data?.[EXTRACTED_THROUGH] : undefined;
    if (typeof id !== "string" || !position.has(id)) continue;
    if (furthest === undefined || position.get(id)! > position.get(furthest)!) furthest = id;
  }
  return furthest;
}
