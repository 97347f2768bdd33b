import { ConfigurationError } from "@unforget/core";
import { distance as editDistance } from "fastest-levenshtein";

/**
 * Names the SDKs (and their users' habits) give to a setting that has another name here, with what to
 * say about it. An unknown key found here is refused with our name, never taken silently.
 */
const SDK_SETTING_NAMES: Readonly<Record<string, { setting: string; why: string }>> = {
  endpoint: { setting: "baseURL", why: '"endpoint" is the AWS SDK\'s name for it' },
  apiEndpoint: { setting: "baseURL", why: '"apiEndpoint" is the Vertex AI SDK\'s name for it' },
  baseUrl: { setting: "baseURL", why: "URL is in capitals, as in the Anthropic SDK" },
  maxAttempts: { setting: "maxRetries", why: "it counts only the retries (maxAttempts 3 is maxRetries 2)" },
  timeout: { setting: "timeoutMs", why: "it is in milliseconds and bounds each attempt" },
  defaultHeaders: { setting: "headers", why: '"defaultHeaders" is the Anthropic SDK\'s name for it' },
};

/** The first own key of `value` that is not in `known`, or undefined when every key is known. */
export function findUnknownKey(value: object, known: readonly string[]): string | undefined {
  return Object.keys(value).find((key) => !known.includes(key));
}

/**
 * The known name `key` was probably meant to be: its camelCase form (`max_tokens` → `maxTokens`), else
 * the nearest known name by edit distance when it is near enough to be a typo, else undefined.
 */
export function meantKey(key: string, known: readonly string[]): string | undefined {
  const camel = key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
  if (known.includes(camel)) return camel;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(key.length / 4))
    ? best.name
    : undefined;
}

/**
 * Refuses a settings object with a key `owner` does not read (`owner` is how the message names the caller:
 * "createBedrockProvider()"): a `ConfigurationError` naming the key, the setting it was probably meant to be
 * (an SDK's name for one of ours, a typo, snake_case) or else every setting there is. Returns `settings`.
 */
export function checkSettingNames<Settings extends object>(
  owner: string,
  settings: Settings,
  known: readonly string[],
): Settings {
  if (typeof settings !== "object" || settings === null || Array.isArray(settings)) {
    throw new ConfigurationError(
      `${owner} takes an object of settings; it was given ${describeValue(settings)}.`,
    );
  }
  const key = findUnknownKey(settings, known);
  if (key === undefined) return settings;
  const sdkName = SDK_SETTING_NAMES[key];
  let hint: string;
  if (sdkName !== undefined && known.includes(sdkName.setting)) {
    hint = `Here the setting is "${sdkName.setting}": ${sdkName.why}.`;
  } else {
    const meant = meantKey(key, known);
    hint = meant === undefined ? `The settings are ${known.join(", ")}.` : `Did you mean "${meant}"?`;
  }
  throw new ConfigurationError(`${owner} has no setting "${key}", so it would be ignored. ${hint}`, {
    setting: key,
  });
}

/** How a message names a value that is not what it should be: "null", "an array", "a string". */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
