export type {
  AnthropicFakeModel,
  AnthropicFakeReply,
  AnthropicFakeServer,
  AnthropicFakeStep,
} from "./anthropic-fake.ts";
export { startAnthropicFake } from "./anthropic-fake.ts";
export type {
  BedrockFakeCredentials,
  BedrockFakeException,
  BedrockFakeOptions,
  BedrockFakeServer,
} from "./bedrock-fake.ts";
export { startBedrockFake } from "./bedrock-fake.ts";
export type {
  FakeError,
  FakeErrorKind,
  FakeHang,
  FakeProviderServer,
  FakeReply,
  FakeResponder,
  FakeServerOptions,
  FakeStep,
  FakeToolCall,
  RecordedRequest,
} from "./fake-script.ts";
export { fakeTokenCount } from "./fake-script.ts";
export type { VertexFakeOptions, VertexFakeServer } from "./vertex-fake.ts";
export { startVertexFake, VERTEX_FAKE_CA_CERTIFICATE, writeVertexFakeCaCertificate } from "./vertex-fake.ts";
