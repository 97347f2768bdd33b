export type {
  FakeToolCall,
  FakeReply,
  FakeErrorKind,
  FakeError,
  FakeHang,
  FakeStep,
  RecordedRequest,
  FakeServerOptions,
  FakeProviderServer,
} from "./fakes/fake-script.ts";
export { fakeTokenCount } from "./fakes/fake-script.ts";
export type { ConversationOptions, ConversationMutation } from "./arbitraries.ts";
export {
  arbitraryText,
  arbitraryToolOutput,
  arbitraryConversation,
  arbitraryDamagedConversation,
} from "./arbitraries.ts";
export type {
  AnthropicFakeReply,
  AnthropicFakeStep,
  AnthropicFakeModel,
  AnthropicFakeServer,
} from "./fakes/anthropic-fake.ts";
export { startAnthropicFake } from "./fakes/anthropic-fake.ts";
export type {
  ContractProviderSettings,
  ProviderContractCapabilities,
  ProviderContractOptions,
} from "./contract/provider-contract.ts";
export { describeProviderContract, containsDeep } from "./contract/provider-contract.ts";
