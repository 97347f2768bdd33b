/**
 * Context windows and output limits. Providers may learn better numbers at run time (Anthropic's models
 * endpoint, a prompt-too-long error's stated maximum); this registry is the offline default.
 */
export interface ModelLimits {
  /** Canonical model family the id resolved to (e.g. "claude-sonnet-4-5"), or the id itself if unknown. */
  model: string;
  /** Tokens the provider accepts in one request. */
  contextWindow: number;
  /** Largest `max_tokens` the model accepts. */
  maxOutputTokens: number;
  /**
   * What `contextWindow` bounds: "total" when input plus requested output must fit (Claude),
   * "input" when only the input is bounded (Gemini).
   */
  limitKind: "total" | "input";
  /** False when the model was not recognised and conservative defaults were used. */
  known: boolean;
}

export type ModelLimitsEntry = Omit<ModelLimits, "model" | "known">;

/** Conservative defaults for an unrecognised model. */
export const UNKNOWN_MODEL_LIMITS: ModelLimitsEntry = Object.freeze({
  contextWindow: 128_000,
  maxOutputTokens: 8_192,
  limitKind: "total",
});

/**
 * Known families keyed by canonical id prefix. The longest matching prefix wins, so
 * "claude-opus-4-1" is not mistaken for "claude-opus-4".
 */
export const DEFAULT_MODEL_LIMITS: Readonly<Record<string, ModelLimitsEntry>> = Object.freeze({
  // Claude 5.x line and 4.6+ have 1M windows.
  "claude-fable-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-mythos-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-mythos-preview": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-opus-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-sonnet-5": { contextWindow: 1_000_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-haiku-5": { contextWindow: 1_000_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-opus-4-8": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-opus-4-7": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-opus-4-6": { contextWindow: 1_000_000, maxOutputTokens: 128_000, limitKind: "total" },
  "claude-sonnet-4-6": { contextWindow: 1_000_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-opus-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-sonnet-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-haiku-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-opus-4-1": { contextWindow: 200_000, maxOutputTokens: 32_000, limitKind: "total" },
  "claude-opus-4": { contextWindow: 200_000, maxOutputTokens: 32_000, limitKind: "total" },
  "claude-sonnet-4": { contextWindow: 200_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-3-7-sonnet": { contextWindow: 200_000, maxOutputTokens: 64_000, limitKind: "total" },
  "claude-3-5-sonnet": { contextWindow: 200_000, maxOutputTokens: 8_192, limitKind: "total" },
  "claude-3-5-haiku": { contextWindow: 200_000, maxOutputTokens: 8_192, limitKind: "total" },
  "claude-3-haiku": { contextWindow: 200_000, maxOutputTokens: 4_096, limitKind: "total" },
  "claude-3-opus": { contextWindow: 200_000, maxOutputTokens: 4_096, limitKind: "total" },
  // Gemini bounds input and output separately.
  "gemini-3": { contextWindow: 1_048_576, maxOutputTokens: 65_536, limitKind: "input" },
  "gemini-2.5-pro": { contextWindow: 1_048_576, maxOutputTokens: 65_536, limitKind: "input" },
  "gemini-2.5-flash": { contextWindow: 1_048_576, maxOutputTokens: 65_536, limitKind: "input" },
  "gemini-2.0-flash": { contextWindow: 1_048_576, maxOutputTokens: 8_192, limitKind: "input" },
  "gemini-1.5-pro": { contextWindow: 2_097_152, maxOutputTokens: 8_192, limitKind: "input" },
  "gemini-1.5-flash": { contextWindow: 1_048_576, maxOutputTokens: 8_192, limitKind: "input" },
});

const BEDROCK_REGION_PREFIX = /^(?:us|us-gov|eu|apac|ap|jp|au|ca|global)\./i;
const BEDROCK_VENDOR_PREFIX = /^(?:anthropic|google)\./;
const BEDROCK_VERSION_SUFFIX = /-v\d+(?::\d+)?$/;
const VERTEX_VERSION_SUFFIX = /@[\w.-]+$/;
const DATE_SUFFIX = /-\d{8}$/;
const VERTEX_RESOURCE_PREFIX = /^(?:projects\/[^/]+\/locations\/[^/]+\/)?(?:publishers\/[^/]+\/)?models\//;
const BEDROCK_MODEL_ARN = /^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:(?:inference-profile|foundation-model)\/(.+)$/i;

/**
 * The foundation-model id inside a Bedrock model id: the ARN around a system inference profile or a
 * foundation model and the cross-region prefix (`us.`, `us-gov.`, `eu.`, `apac.`, `ap.`, `jp.`, `au.`,
 * `ca.`, `global.`) are removed; case is kept. `us.anthropic.claude-sonnet-4-5-20250929-v1:0` →
 * `anthropic.claude-sonnet-4-5-20250929-v1:0`. An application inference-profile ARN names no foundation
 * model and is returned unchanged. Bedrock's CountTokens takes only such bare ids.
 */
export function bedrockFoundationModelId(modelId: string): string {
  const trimmed = modelId.trim();
  const fromArn = BEDROCK_MODEL_ARN.exec(trimmed)?.[1] ?? trimmed;
  return fromArn.replace(BEDROCK_REGION_PREFIX, "");
}

/**
 * Reduces any provider's model id to the canonical family id: strips Bedrock ARNs, cross-region
 * (`us.`, `eu.`, `apac.`, `global.` …) and vendor prefixes and `-v1:0` suffixes, Vertex resource paths and
 * `@version` suffixes, and date stamps. `us.anthropic.claude-sonnet-4-5-20250929-v1:0` → `claude-sonnet-4-5`.
 */
export function canonicalModelId(model: string): string {
  let id = bedrockFoundationModelId(model).toLowerCase();
  id = id.replace(VERTEX_RESOURCE_PREFIX, "");
  id = id.replace(BEDROCK_VENDOR_PREFIX, "");
  id = id.replace(BEDROCK_VERSION_SUFFIX, "");
  id = id.replace(VERTEX_VERSION_SUFFIX, "");
  id = id.replace(DATE_SUFFIX, "");
  return id;
}

export interface ModelLimitsRegistryOptions {
  /**
   * Extra or replacement entries. A canonical family id ("claude-sonnet-4-5") changes every id of that family;
   * any other id (a Bedrock ARN, a regional or dated id) changes only that exact id.
   */
  overrides?: Record<string, Partial<ModelLimitsEntry>>;
  /** Limits used for unrecognised models; defaults to `UNKNOWN_MODEL_LIMITS`. */
  unknownDefaults?: ModelLimitsEntry;
  /** Called once per unrecognised model id. Defaults to `process.emitWarning`. */
  onUnknownModel?: (model: string, used: ModelLimits) => void;
}

export interface ModelLimitsRegistry {
  /** Limits for any provider's model id. Never throws: unknown ids get conservative defaults and a warning. */
  get(model: string): ModelLimits;
  /** Registers or replaces limits at run time (e.g. learned from a models endpoint). */
  set(model: string, entry: Partial<ModelLimitsEntry>): void;
}

export function createModelLimitsRegistry(options: ModelLimitsRegistryOptions = {}): ModelLimitsRegistry {
  const table = new Map<string, ModelLimitsEntry>(Object.entries(DEFAULT_MODEL_LIMITS));
  const exact = new Map<string, ModelLimitsEntry>();
  const unknownDefaults = options.unknownDefaults ?? UNKNOWN_MODEL_LIMITS;
  const warned = new Set<string>();
  const onUnknown =
    options.onUnknownModel ??
    ((model: string, used: ModelLimits) => {
      process.emitWarning(
        `Unknown model "${model}": using a ${used.contextWindow}-token window and ${used.maxOutputTokens} output tokens. ` +
          "Pass its limits through the model limits overrides to silence this warning.",
        { code: "UNFORGET_UNKNOWN_MODEL" },
      );
    });

  const set = (model: string, entry: Partial<ModelLimitsEntry>) => {
    const key = model.trim().toLowerCase();
    const canonical = canonicalModelId(model);
    const base = table.get(canonical) ?? lookupPrefix(table, canonical)?.[1] ?? unknownDefaults;
    const merged = { ...base, ...entry };
    // A family name ("claude-sonnet-4-5") changes the family; a deployment id (a Bedrock ARN, a dated or
    // regional id) changes only that id.
    if (canonical === key) table.set(key, merged);
    else exact.set(key, merged);
  };
  for (const [model, entry] of Object.entries(options.overrides ?? {})) set(model, entry);

  return {
    get(model) {
      const key = model.trim().toLowerCase();
      const direct = exact.get(key);
      if (direct) return { model: canonicalModelId(model), known: true, ...direct };
      const canonical = canonicalModelId(model);
      const match = lookupPrefix(table, canonical);
      if (match) return { model: match[0], known: true, ...match[1] };
      const used: ModelLimits = { model: canonical, known: false, ...unknownDefaults };
      if (!warned.has(canonical)) {
        warned.add(canonical);
        onUnknown(model, used);
      }
      return used;
    },
    set,
  };
}

function lookupPrefix(
  table: Map<string, ModelLimitsEntry>,
  canonical: string,
): [string, ModelLimitsEntry] | undefined {
  let best: [string, ModelLimitsEntry] | undefined;
  for (const [prefix, entry] of table) {
    if (canonical === prefix || canonical.startsWith(`${prefix}-`) || canonical.startsWith(`${prefix}.`)) {
      if (!best || prefix.length > best[0].length) best = [prefix, entry];
    }
  }
  return best;
}

let defaultRegistry: ModelLimitsRegistry | undefined;

/** Limits from the default registry (no overrides). Use `createModelLimitsRegistry` to configure. */
export function getModelLimits(model: string): ModelLimits {
  defaultRegistry ??= createModelLimitsRegistry();
  return defaultRegistry.get(model);
}
