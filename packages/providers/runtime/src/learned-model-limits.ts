import {
  createModelLimitsRegistry,
  type ModelLimits,
  type ModelLimitsRegistry,
  PromptTooLongError,
} from "@unforget/core";

/** A registry that also learns, per instance, the windows providers actually enforce. */
export interface LearnedModelLimits extends ModelLimitsRegistry {
  /**
   * Called with the error a model call failed with and the model id that call used. A `PromptTooLongError`
   * stating the enforced maximum (`limitTokens`, which may be a regional or quota cap) bounds that model id's
   * context window from then on: a known window is only ever lowered, an unrecognised model's default is
   * replaced. Anything else is ignored. Returns true when `get(model).contextWindow` changed.
   */
  learnFromPromptTooLong(model: string, error: unknown): boolean;
  /**
   * Wraps a response stream of `model`: events pass through unchanged, and an error the stream ends with is
   * given to `learnFromPromptTooLong` before it is rethrown. Called by providers around their event stream.
   */
  learnFromStream<Event>(model: string, events: AsyncIterable<Event>): AsyncGenerator<Event>;
}

/**
 * Wraps a registry so that it remembers the maximum stated by prompt-too-long errors, keyed by the exact
 * model id (trimmed, lower-cased). Entries given to `set` (e.g. from a models endpoint) replace the
 * registry's base values as before; a learned maximum still bounds them. Keep one per provider instance:
 * a cap learned in one region or project says nothing about another.
 */
export function createLearnedModelLimits(
  registry: ModelLimitsRegistry = createModelLimitsRegistry(),
): LearnedModelLimits {
  const caps = new Map<string, number>();
  const get = (model: string): ModelLimits => {
    const base = registry.get(model);
    const cap = caps.get(model.trim().toLowerCase());
    if (cap === undefined) return base;
    return { ...base, contextWindow: base.known ? Math.min(base.contextWindow, cap) : cap };
  };
  const learned: LearnedModelLimits = {
    get,
    set(model, entry) {
      registry.set(model, entry);
    },
    async *learnFromStream(model, events) {
      try {
        yield* events;
      } catch (error) {
        learned.learnFromPromptTooLong(model, error);
        throw error;
      }
    },
    learnFromPromptTooLong(model, error) {
      if (!(error instanceof PromptTooLongError)) return false;
      const limit = error.limitTokens;
      if (limit === undefined || !Number.isSafeInteger(limit) || limit <= 0) return false;
      const before = get(model).contextWindow;
      const key = model.trim().toLowerCase();
      const previous = caps.get(key);
      caps.set(key, previous === undefined ? limit : Math.min(previous, limit));
      return get(model).contextWindow !== before;
    },
  };
  return learned;
}
