// `@unforget/provider-anthropic/environment`: the environment rules and the default model without the SDK, so that choosing
// a provider (`createProviderFromEnv`) loads no provider's SDK but the chosen one's (docs/decisions/0034).
export type { AnthropicEnvironmentSettings } from "./anthropic-environment.ts";
export { ANTHROPIC_DEFAULT_MODEL, detectAnthropicEnvironment } from "./anthropic-environment.ts";
