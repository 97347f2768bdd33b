import type { AgentSessionOptions } from "../loop/agent-session-options.ts";
import type { SessionEvent } from "../loop/session-events.ts";
import type { ToolCallAuthorizer } from "../tools/tool-authorization.ts";
import { createPermissionGate, type PermissionGate } from "./permission-gate.ts";
import type { CanUseTool } from "./permission-types.ts";

/** How a session decides about its tool calls: the authorizer the loop calls, and the gate when it is one. */
export interface SessionAuthorization {
  readonly authorize: ToolCallAuthorizer;
  /** The permission gate (modes, rules), when the session built it or was given one. */
  readonly gate: PermissionGate | undefined;
}

/**
 * The session's authorization from its options: a given authorizer or gate as it is, otherwise a permission gate
 * in Claude Code's model whose questions go through `canUseTool`, with a `permission-request` event before each
 * question and a `permission-decision` event after an allow (denials are reported by the tool runner).
 */
export function sessionAuthorization(
  options: AgentSessionOptions,
  cwd: string,
  emitter: () => (event: SessionEvent) => void,
): SessionAuthorization {
  const permissions = options.permissions;
  if (typeof permissions === "function") return { authorize: permissions, gate: undefined };
  if (permissions !== undefined && "authorize" in permissions) {
    return { authorize: (request) => permissions.authorize(request), gate: permissions };
  }
  const ask = options.canUseTool;
  const canUseTool: CanUseTool | undefined = ask
    ? async (tool, input, questionOptions) => {
        const emit = emitter();
        emit({ type: "permission-request", toolUseId: questionOptions.toolUseId, name: tool.name, input });
        const answer = await ask(tool, input, questionOptions);
        if (answer.behavior === "allow") {
          emit({
            type: "permission-decision",
            toolUseId: questionOptions.toolUseId,
            name: tool.name,
            behavior: "allow",
            reason: "user",
          });
        }
        return answer;
      }
    : undefined;
  const gate = createPermissionGate({ ...permissions, cwd, ...(canUseTool ? { canUseTool } : {}) });
  return { authorize: (request) => gate.authorize(request), gate };
}
