import { canonicalModelId } from "./model-limits.ts";

/** A model its vendor has deprecated: the day it stops answering, and the model to move to. */
export interface ModelRetirement {
  /** The canonical family id that matched ("claude-sonnet-4-5"). */
  model: string;
  /** The end-of-life date the vendor announced (ISO 8601 day); requests fail from then on. */
  retiresOn: string;
  /** The current model of the same kind to use instead. */
  replacement: string;
}

/**
 * Deprecated model families by canonical id, from Anthropic's model-deprecations page and the Anthropic
 * SDK's own deprecated-models list (1.14.0; a test fails when a newer SDK lists a model missing here).
 * A provider's default model must never be in this table.
 */
const RETIREMENTS: Readonly<Record<string, Omit<ModelRetirement, "model">>> = Object.freeze({
  "claude-2.0": { retiresOn: "2025-07-21", replacement: "claude-sonnet-4-6" },
  "claude-2.1": { retiresOn: "2025-07-21", replacement: "claude-sonnet-4-6" },
  "claude-3-sonnet": { retiresOn: "2025-07-21", replacement: "claude-sonnet-4-6" },
  "claude-3-5-sonnet": { retiresOn: "2025-10-22", replacement: "claude-sonnet-4-6" },
  "claude-3-opus": { retiresOn: "2026-01-05", replacement: "claude-opus-4-6" },
  "claude-3-7-sonnet": { retiresOn: "2026-02-19", replacement: "claude-sonnet-4-6" },
  "claude-3-5-haiku": { retiresOn: "2026-02-19", replacement: "claude-haiku-4-5" },
  "claude-mythos-preview": { retiresOn: "2026-06-30", replacement: "claude-mythos-5" },
  "claude-sonnet-4-5": { retiresOn: "2026-11-30", replacement: "claude-sonnet-4-6" },
  "claude-opus-4-5": { retiresOn: "2027-01-22", replacement: "claude-opus-4-6" },
});

/**
 * The retirement of a deprecated model, for any provider's id of it (Anthropic, dated, Bedrock profile or
 * ARN, Vertex `@` version), or undefined for a current or unknown model.
 */
export function modelRetirement(model: string): ModelRetirement | undefined {
  const canonical = canonicalModelId(model);
  const retirement = RETIREMENTS[canonical];
  return retirement === undefined ? undefined : { model: canonical, ...retirement };
}
