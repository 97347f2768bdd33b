export type { VertexAccessTokenSource, VertexEnvironmentSettings } from "./vertex-environment.ts";
export { detectVertexEnvironment, VERTEX_DEFAULT_MODEL } from "./vertex-environment.ts";
export { VERTEX_PROVIDER_ID } from "./vertex-error.ts";
export type { VertexProvider, VertexProviderOptions, VertexProviderSettings } from "./vertex-provider.ts";
export { createVertexProvider } from "./vertex-provider.ts";
