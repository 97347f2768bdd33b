/**
 * The bus's own hooks: property → the event name Claude Code (and our settings files) use for it. Hooks that
 * other packages declare with `defineHookGroup` carry their event name in their own options.
 */
export const HOOK_EVENT_NAMES = {
  preCompact: "PreCompact",
  postCompact: "PostCompact",
  sessionStart: "SessionStart",
  sessionEnd: "SessionEnd",
  postSampling: "PostSampling",
  preToolUse: "PreToolUse",
  postToolUse: "PostToolUse",
  userPromptSubmit: "UserPromptSubmit",
} as const;

export type HookName = keyof typeof HOOK_EVENT_NAMES;
export type HookEventName = (typeof HOOK_EVENT_NAMES)[HookName];

/**
 * Events Claude Code fires that this bus does not: settings files shared with Claude Code may configure them,
 * so they are loaded without a problem note (and run only if a hook group declares one of them).
 */
export const CLAUDE_CODE_ONLY_EVENT_NAMES: readonly string[] = [
  "Setup",
  "UserPromptExpansion",
  "PermissionRequest",
  "PermissionDenied",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "TaskCreated",
  "TaskCompleted",
  "TeammateIdle",
  "Elicitation",
  "ElicitationResult",
  "InstructionsLoaded",
  "ConfigChange",
  "CwdChanged",
  "FileChanged",
  "WorktreeCreate",
  "WorktreeRemove",
];
