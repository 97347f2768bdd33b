// The fakes are Node servers: their typings name Node's types, from the @types/node peer dependency.
/// <reference types="node" preserve="true" />
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
export type { FakeGate, FakeModelProvider, FakeModelProviderOptions } from "./fake-model-provider.ts";
export { createFakeModelProvider } from "./fake-model-provider.ts";
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
