// `@unforget/provider-vertex/environment`: the environment rules and the default model without the SDK, so that choosing
// a provider (`createProviderFromEnv`) loads no provider's SDK but the chosen one's (docs/decisions/0034).
export type { VertexAccessTokenSource, VertexEnvironmentSettings } from "./vertex-environment.ts";
export { detectVertexEnvironment, VERTEX_DEFAULT_MODEL } from "./vertex-environment.ts";
