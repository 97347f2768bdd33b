export type { ConversationMutation, ConversationOptions } from "./arbitraries.ts";
export {
  arbitraryConversation,
  arbitraryDamagedConversation,
  arbitraryText,
  arbitraryToolOutput,
} from "./arbitraries.ts";
export type {
  ContractProviderSettings,
  ProviderContractCapabilities,
  ProviderContractOptions,
} from "./contract/provider-contract.ts";
export { containsDeep, describeProviderContract } from "./contract/provider-contract.ts";
export type { CorpusFormat, CorpusSession } from "./corpus.ts";
export {
  CORPUS_DIR_ENV,
  corpusDir,
  findRepositoryRoot,
  listCorpusSessions,
  loadCorpusFile,
} from "./corpus.ts";
export type {
  AnthropicFakeModel,
  AnthropicFakeReply,
  AnthropicFakeServer,
  AnthropicFakeStep,
} from "./fakes/anthropic-fake.ts";
export { startAnthropicFake } from "./fakes/anthropic-fake.ts";
export type {
  BedrockFakeCredentials,
  BedrockFakeException,
  BedrockFakeOptions,
  BedrockFakeServer,
} from "./fakes/bedrock-fake.ts";
export { startBedrockFake } from "./fakes/bedrock-fake.ts";
export type {
  FakeError,
  FakeErrorKind,
  FakeHang,
  FakeProviderServer,
  FakeReply,
  FakeServerOptions,
  FakeStep,
  FakeToolCall,
  RecordedRequest,
} from "./fakes/fake-script.ts";
export { fakeTokenCount } from "./fakes/fake-script.ts";
export type { VertexFakeOptions, VertexFakeServer } from "./fakes/vertex-fake.ts";
export {
  startVertexFake,
  VERTEX_FAKE_CA_CERTIFICATE,
  writeVertexFakeCaCertificate,
} from "./fakes/vertex-fake.ts";
