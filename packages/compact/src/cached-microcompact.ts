import type { Message, Usage } from "@unforget/core";
import { type CompactableTools, compactablePredicate } from "./compactable-tools.ts";
import { indexToolUses } from "./conversation.ts";

/** Active (not yet deleted) compactable results at which a batch of cache deletions is queued. */
export const DEFAULT_CACHE_EDIT_TRIGGER = 12;

/** A deletion of one tool result from the provider's cached prefix, by its tool_use id. */
export interface CacheEdit {
  type: "delete";
  toolUseId: string;
}

export interface CachedMicrocompactOptions {
  /** Active compactable results that trigger a batch of deletions; default 12. */
  triggerCount?: number;
  /** Most recent results never deleted; default 5. */
  keepRecent?: number;
  /** Tools whose results may be deleted; default `DEFAULT_COMPACTABLE_TOOLS`. */
  compactableTools?: CompactableTools;
}

export interface CachedMicrocompactPlan {
  /** Every deletion pinned so far: re-sent with every request while the cache lives (edits are relative to it). */
  pinned: CacheEdit[];
  /** The deletions this call added (empty when the trigger was not reached). */
  added: CacheEdit[];
}

/** The state of cached microcompact for one session (see `createCachedMicrocompact`). */
export interface CachedMicrocompact {
  /** Called before each request with the projected messages; registers new results and queues deletions at the trigger. */
  plan(messages: readonly Message[]): CachedMicrocompactPlan;
  /** Called with each response's usage: no cache read while edits are pinned means the cache expired, so the state is dropped. */
  observeUsage(usage: Usage): void;
  /** Called after a full compaction (the ids no longer exist) or when the cache is known to be cold. */
  reset(): void;
  /** Tool_use ids already deleted. */
  readonly deleted: ReadonlySet<string>;
}

/**
 * Clears old tool results while the prompt cache is warm, without changing the local messages: deletions by
 * tool_use id are queued for the provider (cache edits) so the cached prefix stays valid. Tracks the results
 * seen (registered, in order) and those deleted; when the active ones reach the trigger, all but the most
 * recent are queued. Deletions are pinned and re-sent on every request until the cache expires or a full
 * compaction resets the state. Only providers whose capabilities include `cacheEdits` can apply them.
 */
export function createCachedMicrocompact(options: CachedMicrocompactOptions = {}): CachedMicrocompact {
  const trigger = Math.max(1, options.triggerCount ?? DEFAULT_CACHE_EDIT_TRIGGER);
  const keepRecent = Math.max(0, options.keepRecent ?? 5);
  const compactable = compactablePredicate(options.compactableTools);
  const registered = new Set<string>();
  const order: string[] = [];
  const deleted = new Set<string>();
  let pinned: CacheEdit[] = [];

  const reset = () => {
    registered.clear();
    order.length = 0;
    deleted.clear();
    pinned = [];
  };

  return {
    plan(messages) {
      const calls = indexToolUses(messages);
      for (const message of messages) {
        if (message.role !== "user") continue;
        for (const block of message.content) {
          if (block.type !== "tool_result" || registered.has(block.tool_use_id)) continue;
          const call = calls.get(block.tool_use_id);
          if (!call || !compactable(call.use.name)) continue;
          registered.add(block.tool_use_id);
          order.push(block.tool_use_id);
        }
      }
      const active = order.filter((id) => !deleted.has(id));
      if (active.length < trigger) return { pinned: [...pinned], added: [] };
      const added: CacheEdit[] = active
        .slice(0, Math.max(0, active.length - keepRecent))
        .map((toolUseId) => ({ type: "delete", toolUseId }));
      for (const edit of added) deleted.add(edit.toolUseId);
      pinned = [...pinned, ...added];
      return { pinned: [...pinned], added };
    },
    observeUsage(usage) {
      if (pinned.length > 0 && usage.cacheReadInputTokens === 0) reset();
    },
    reset,
    get deleted() {
      return deleted;
    },
  };
}
