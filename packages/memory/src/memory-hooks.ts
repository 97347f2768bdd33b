import {
  createObserverHook,
  defineHookGroup,
  type HookGroupAccessor,
  type SessionEventBase,
} from "@unforget/hooks";
import type { AsyncParallelHook } from "tapable";

/** Memories were written (by extraction, dream, the memory tool or an approved proposal). */
export interface MemoryWrittenEvent extends SessionEventBase {
  /** The memory names written. */
  names: string[];
  /** What wrote them ("extraction", "dream", "memory-tool", "proposal"). */
  by: string;
  /** The store's location. */
  store: string;
}

/** Memory changes were queued for the user's review instead of being written. */
export interface MemoryProposedEvent extends SessionEventBase {
  proposalId: string;
  names: string[];
  by: string;
  store: string;
}

/** The hooks `@unforget/memory` declares on a session bus. */
export type MemoryHooks = {
  /** After memories were written; observers. */
  readonly memoryWritten: AsyncParallelHook<[MemoryWrittenEvent]>;
  /** After memory changes were proposed for review; observers. */
  readonly memoryProposed: AsyncParallelHook<[MemoryProposedEvent]>;
};

/**
 * The memory hooks of a session bus. `@unforget/memory` fires them; plugins and command hooks (events
 * `MemoryWritten`, `MemoryProposed`) observe them, so no memory write is ever silent.
 */
export const getMemoryHooks: HookGroupAccessor<MemoryHooks> = defineHookGroup("memory", () => ({
  memoryWritten: createObserverHook<[MemoryWrittenEvent]>(["event"], "memoryWritten", {
    eventName: "MemoryWritten",
  }),
  memoryProposed: createObserverHook<[MemoryProposedEvent]>(["event"], "memoryProposed", {
    eventName: "MemoryProposed",
  }),
}));
