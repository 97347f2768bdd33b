import type { ToolCallRequest } from "../tools/tool-authorization.ts";
import { authorizeCall } from "./gate-decision.ts";
import { createGateState, rulesInOrder, updateGate } from "./gate-state.ts";
import type { PermissionRule } from "./permission-rule.ts";
import type {
  PermissionDecision,
  PermissionGateOptions,
  PermissionMode,
  PermissionUpdate,
} from "./permission-types.ts";

// The gate's pieces, one concern each: permission-types.ts (modes, answers, decisions, options), gate-state.ts
// (its rules, mode and directories), call-facts.ts (what a call touches and runs), rule-matching.ts (which rules
// catch a call), gate-decision.ts (the order in which rules, modes, hooks and the user decide), suggestions.ts
// (what "always allow" would add), and shell/ (how a Bash command is read).

/** Decides whether each tool call may run, as Claude Code does; plug `authorize` into the session. */
export interface PermissionGate {
  /** The session's `ToolCallAuthorizer`: called once per call after validation and PreToolUse. Never rejects. */
  authorize(request: ToolCallRequest): Promise<PermissionDecision>;
  /** The mode now (a user's answer may have changed it). */
  mode(): PermissionMode;
  /** Called when the user switches mode (e.g. shift+tab in a UI). */
  setMode(mode: PermissionMode): void;
  /** Applies updates for the rest of the session, as an "always" answer does; a bad rule throws. */
  update(updates: readonly PermissionUpdate[]): void;
  /** Every rule in force, deny first, then ask, then allow. */
  rules(): PermissionRule[];
  /** The working directories (absolute), `cwd` first. */
  directories(): string[];
}

/** A permission gate over the rules of its options (an unreadable rule throws `PermissionRuleError`). */
export function createPermissionGate(options: PermissionGateOptions): PermissionGate {
  const state = createGateState(options);
  return {
    authorize: (request) => authorizeCall(state, request),
    mode: () => state.mode,
    setMode(next) {
      state.mode = next;
    },
    update(updates) {
      updateGate(state, updates);
    },
    rules: () => rulesInOrder(state),
    directories: () => [...state.directories],
  };
}
