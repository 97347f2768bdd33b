export type { AnthropicEnvironmentSettings } from "./anthropic-environment.ts";
export { ANTHROPIC_DEFAULT_MODEL, detectAnthropicEnvironment } from "./anthropic-environment.ts";
export { ANTHROPIC_PROVIDER_ID } from "./anthropic-error.ts";
export type {
  AnthropicProvider,
  AnthropicProviderOptions,
  AnthropicProviderSettings,
} from "./anthropic-provider.ts";
export { createAnthropicProvider } from "./anthropic-provider.ts";
export type { AnthropicRequest, WireObject } from "./convert-to-anthropic-request.ts";
export { convertToAnthropicRequest } from "./convert-to-anthropic-request.ts";
