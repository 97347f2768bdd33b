/**
 * Variables that hold (or point at) a provider's credentials, matched without regard to case: the model's
 * commands do not get them unless the options allow them by name.
 */
export const CREDENTIAL_VARIABLES: readonly RegExp[] = [
  /^ANTHROPIC_/i,
  /^CLAUDE_CODE_OAUTH_TOKEN$/i,
  /^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|SECURITY_TOKEN|BEARER_TOKEN_BEDROCK|PROFILE|SHARED_CREDENTIALS_FILE|WEB_IDENTITY_TOKEN_FILE|ROLE_ARN|CONTAINER_CREDENTIALS_FULL_URI|CONTAINER_CREDENTIALS_RELATIVE_URI|CONTAINER_AUTHORIZATION_TOKEN)$/i,
  /^GOOGLE_(APPLICATION_CREDENTIALS|API_KEY|OAUTH_ACCESS_TOKEN)$/i,
  /^GEMINI_API_KEY$/i,
  /^CLOUDSDK_AUTH_ACCESS_TOKEN$/i,
];

/** The variables of `environment` that commands must not get: credentials not allowed by name. */
export function credentialVariables(
  environment: NodeJS.ProcessEnv,
  allowed: readonly string[] = [],
): string[] {
  const allow = new Set(allowed.map((name) => name.toUpperCase()));
  return Object.keys(environment).filter(
    (name) => !allow.has(name.toUpperCase()) && CREDENTIAL_VARIABLES.some((pattern) => pattern.test(name)),
  );
}

/** A copy of `environment` without `names`. */
export function withoutVariables(
  environment: NodeJS.ProcessEnv,
  names: readonly string[],
): NodeJS.ProcessEnv {
  const copy = { ...environment };
  for (const name of names) delete copy[name];
  return copy;
}
