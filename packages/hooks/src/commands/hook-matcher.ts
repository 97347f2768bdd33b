const PLAIN_NAMES = /^[A-Za-z0-9_|]+$/;

/**
 * Claude Code's matcher rules: no matcher, "" or "*" match everything; a matcher made only of letters, digits,
 * "_" and "|" is a list of exact names; anything else is a regular expression tested against the value.
 * An invalid regular expression matches nothing.
 */
export function matchesHookMatcher(matcher: string | undefined, value: string): boolean {
  if (matchesEveryValue(matcher)) return true;
  if (PLAIN_NAMES.test(matcher)) return matcher.split("|").includes(value);
  try {
    return new RegExp(matcher).test(value);
  } catch {
    return false;
  }
}

/** No matcher, "" and "*" match every value, even when the event has none to match on. */
export function matchesEveryValue(matcher: string | undefined): matcher is undefined | "" | "*" {
  return matcher === undefined || matcher === "" || matcher === "*";
}
