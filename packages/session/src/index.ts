export type { SessionSpan, SessionSpanEnd, SessionSpanStart, SessionTracer } from "./session-tracer.ts";
export { noopTracer } from "./session-tracer.ts";
export type { ToolCallAuthorizer, ToolCallDecision, ToolCallRequest } from "./tool-authorization.ts";
export { allowAllToolCalls } from "./tool-authorization.ts";
