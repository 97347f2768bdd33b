import type { Tool } from "@unforget/core";
import type { ToolCallDecision } from "../tools/tool-authorization.ts";
import type { PathContext } from "./permission-path.ts";
import type { PermissionBehavior, PermissionRule, PermissionRuleSource } from "./permission-rule.ts";

// The permission gate's vocabulary: its modes, the updates a user's answer may carry, the question to the UI and
// its answer, the gate's decisions, and its options.

/**
 * Claude Code's modes: `default` asks for what no rule allows; `acceptEdits` also allows file writes inside the
 * working directories; `plan` allows read-only tools only; `bypassPermissions` allows all but what deny and ask
 * rules catch; `dontAsk` denies whatever would have been asked (for runs with no one to ask).
 */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk";

export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
];

/** A change the user may approve along with a call; it lasts for the session. */
export type PermissionUpdate =
  | { type: "addRules"; behavior: PermissionBehavior; rules: string[] }
  | { type: "setMode"; mode: PermissionMode }
  | { type: "addDirectories"; directories: string[] };

/** What the UI answers when asked about a call. */
export type PermissionResponse =
  | {
      behavior: "allow";
      /** Run the call with this input instead (the user edited it). */
      updatedInput?: Record<string, unknown>;
      /** Apply these for the rest of the session ("always allow"), usually some of the suggestions. */
      updatedPermissions?: PermissionUpdate[];
    }
  | {
      behavior: "deny";
      /** What the model reads: why, and what to do instead. */
      message: string;
    };

export interface CanUseToolOptions {
  /** Aborted when the turn is cancelled: stop asking and resolve (any answer is then ignored). */
  signal: AbortSignal;
  /** Updates the UI can offer as "always allow …" (a prefix rule, acceptEdits, a directory). */
  suggestions: PermissionUpdate[];
  /** Why the call needs an answer, in one sentence. */
  reason: string;
  toolUseId: string;
  /** The path that is outside the working directories, when that is why. */
  blockedPath?: string;
}

/** Called when a call needs the user's answer; a rejection is a denial. */
export type CanUseTool = (
  tool: Tool,
  input: Record<string, unknown>,
  options: CanUseToolOptions,
) => Promise<PermissionResponse>;

/** Who or what decided: a rule (and where it came from), the mode, a hook, the user, or the defaults. */
export type PermissionDecisionReason =
  | { type: "rule"; rule: PermissionRule }
  | { type: "mode"; mode: PermissionMode }
  | { type: "hook" }
  | { type: "user" }
  | { type: "default"; detail: string }
  | { type: "no-one-to-ask"; detail: string };

/** The loop's decision, with what decided it. */
export type PermissionDecision = ToolCallDecision & { decidedBy: PermissionDecisionReason };

/** Rule lists in Claude Code's settings syntax. */
export interface PermissionRuleLists {
  allow?: readonly string[];
  deny?: readonly string[];
  ask?: readonly string[];
}

export interface PermissionGateOptions extends PathContext {
  /** Default `default`. */
  mode?: PermissionMode;
  /** Rules from settings files (see `loadPermissionSettings`), each with its source. */
  sources?: readonly (PermissionRuleLists & { source: PermissionRuleSource })[];
  /** Rules given in code; `/path` patterns are relative to `cwd`. An unreadable rule throws `PermissionRuleError`. */
  rules?: PermissionRuleLists;
  /** Folders besides `cwd` that count as working directories (Claude Code's `additionalDirectories`). */
  additionalDirectories?: readonly string[];
  /** Asked when a call needs an answer; without it such calls are denied with a message that says so. */
  canUseTool?: CanUseTool;
}
