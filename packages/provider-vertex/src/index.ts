export type { VertexAccessTokenSource, VertexProviderSettings } from "./vertex-provider.ts";
export { createVertexProvider } from "./vertex-provider.ts";
