import { noticeDeprecatedModel, withSdkWarnings } from "@unforget/provider-runtime";

/** The Anthropic SDK's model deprecation warning (1.14): model, then the end-of-life date in words. */
const DEPRECATED_MODEL =
  /^The model '([^']+)' is deprecated and will reach end-of-life on ([^\n]+?)\s*(?:\n|$)/;

/**
 * Runs one synchronous SDK call with the SDK's deprecation warnings turned into one line per process: the
 * SDK prints two lines on every request; a deprecated model is named with when it retires and what to use
 * instead, any other deprecation once in the SDK's words.
 */
export function withSdkNotices<T>(call: () => T): T {
  return withSdkWarnings("the Anthropic SDK", call, (warning) => {
    const model = DEPRECATED_MODEL.exec(warning);
    if (model?.[1] === undefined) return false;
    noticeDeprecatedModel(model[1], model[2]);
    return true;
  });
}
