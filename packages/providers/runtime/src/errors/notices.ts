import { canonicalModelId, modelRetirement } from "@unforget/core";

/** Where the keys of the notices already shown live: one set per process, whichever copy of this module runs. */
const SHOWN = Symbol.for("@unforget/provider-runtime:notices-shown");

/** Where links in the notices point for models Anthropic deprecates. */
const DEPRECATIONS_PAGE = "https://docs.anthropic.com/en/docs/resources/model-deprecations";

/**
 * Shows `line` once per process (per `key`), as one line on stderr. Nothing is shown when Node runs with
 * `--no-deprecation`; returns whether the line was shown.
 */
export function noticeOnce(key: string, line: string): boolean {
  const registry = globalThis as { [SHOWN]?: Set<string> };
  registry[SHOWN] ??= new Set<string>();
  const shown = registry[SHOWN];
  if (shown.has(key) || process.noDeprecation === true) return false;
  shown.add(key);
  console.warn(line.replace(/\s*\n\s*/g, " "));
  return true;
}

/**
 * Says once per process that requests name a deprecated model: its end of life (from core's table, else
 * `endOfLife` as the SDK gave it) and the model to move to. Silent for a model neither knows as deprecated.
 */
export function noticeDeprecatedModel(model: string, endOfLife?: string): boolean {
  const retirement = modelRetirement(model);
  const date = retirement?.retiresOn ?? endOfLife;
  if (date === undefined) return false;
  const instead = retirement === undefined ? "" : `; use ${retirement.replacement} instead`;
  return noticeOnce(
    `deprecated-model:${canonicalModelId(model)}`,
    `unforget: the model ${model} is deprecated and reaches its end of life on ${date}${instead} (${DEPRECATIONS_PAGE}).`,
  );
}

/**
 * Runs one synchronous SDK call with the SDK's `console.warn` deprecation warnings turned into notices:
 * SDKs print theirs on every call (or every client), over several lines; a deployment sees each once per
 * process, in one line naming the SDK. `interpret` may handle a warning itself (return true). Any other
 * warning passes through unchanged.
 */
export function withSdkWarnings<T>(sdk: string, call: () => T, interpret?: (warning: string) => boolean): T {
  const warn = console.warn;
  const intercept = (...args: unknown[]) => {
    const [first] = args;
    if (args.length === 1 && typeof first === "string" && /\bdeprecated\b/i.test(first)) {
      // The notice itself is written with the real console.warn, not through this interception.
      console.warn = warn;
      try {
        if (interpret?.(first) !== true) noticeOnce(`${sdk}:${first}`, `unforget: ${sdk} says: ${first}`);
      } finally {
        console.warn = intercept;
      }
      return;
    }
    warn.apply(console, args);
  };
  console.warn = intercept;
  try {
    return call();
  } finally {
    console.warn = warn;
  }
}
