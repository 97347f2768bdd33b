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
