/**
 * What a provider finds in an environment (and in explicit settings). Each provider package exports a
 * `detect…Environment(env, settings)` returning it, and `createProviderFromEnv` decides with it alone, so
 * what auto-detection picks is checked exactly as an explicit choice is.
 */
export interface EnvironmentDetection {
  /** Why this provider is the one configured ("AWS_PROFILE is set"); undefined when nothing points to it. */
  reason: string | undefined;
  /** What stops the first request from succeeding, and what to set; undefined when nothing does. */
  problem: EnvironmentProblem | undefined;
  /** One line saying what this provider needs, for a list of every provider's requirements. */
  help: string;
  /** Where requests go when the settings or the environment point elsewhere than the provider's own service. */
  endpoint?: string;
}

export interface EnvironmentProblem {
  /** A sentence saying what is missing or wrong and what to set. */
  message: string;
  /** The variable or setting to fix ("AWS_REGION", "GOOGLE_CLOUD_PROJECT", …). */
  setting: string;
}

/** A variable's (or setting's) value, trimmed, or undefined when it is absent or blank: blank means unset. */
export function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
