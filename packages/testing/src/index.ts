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
