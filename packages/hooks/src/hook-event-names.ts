/** Bus property → the event name Claude Code (and our settings files) use for it. */
export const HOOK_EVENT_NAMES = {
  preCompact: "PreCompact",
  postCompact: "PostCompact",
  sessionStart: "SessionStart",
  sessionEnd: "SessionEnd",
  postSampling: "PostSampling",
  preToolUse: "PreToolUse",
  postToolUse: "PostToolUse",
  userPromptSubmit: "UserPromptSubmit",
  taskSettled: "TaskSettled",
} as const;

export type HookName = keyof typeof HOOK_EVENT_NAMES;
export type HookEventName = (typeof HOOK_EVENT_NAMES)[HookName];
