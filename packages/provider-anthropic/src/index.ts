export { ANTHROPIC_PROVIDER_ID } from "./anthropic-error.ts";
export type { AnthropicProvider, AnthropicProviderSettings } from "./anthropic-provider.ts";
export { createAnthropicProvider } from "./anthropic-provider.ts";
