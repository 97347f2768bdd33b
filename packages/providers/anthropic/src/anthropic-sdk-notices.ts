import { noticeDeprecatedModel, noticeOnce } from "@unforget/provider-runtime";

/** The Anthropic SDK's model deprecation warning (1.14): model, then the end-of-life date in words. */
const DEPRECATED_MODEL =
  /^The model '([^']+)' is deprecated and will reach end-of-life on ([^\n]+?)\s*(?:\n|$)/;

/**
 * Runs one synchronous SDK call with the SDK's `console.warn` deprecation notices turned into ours: the SDK
 * prints two lines on every request; a deployment sees one line per process (a deprecated model: when it
 * retires and what to use instead). Any other warning passes through unchanged.
 */
export function withSdkNotices<T>(call: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const [first] = args;
    if (args.length === 1 && typeof first === "string" && /\bdeprecated\b/.test(first)) {
      const model = DEPRECATED_MODEL.exec(first);
      if (model?.[1] !== undefined) noticeDeprecatedModel(model[1], model[2]);
      else noticeOnce(`anthropic-sdk:${first}`, `unforget: the Anthropic SDK says: ${first}`);
      return;
    }
    warn.apply(console, args);
  };
  try {
    return call();
  } finally {
    console.warn = warn;
  }
}
