export type {
  SessionEventBase,
  PreCompactEvent,
  HookVeto,
  PreCompactResult,
  PostCompactEvent,
  SessionStartSource,
  SessionStartEvent,
  SessionEndEvent,
  PostSamplingEvent,
  PreToolUseEvent,
  PreToolUseDecision,
  PostToolUseEvent,
  UserPromptSubmitEvent,
  TaskSettledEvent,
  HookAttachments,
} from "./hook-events.ts";
export { HookError, HookSettingsError } from "./hook-error.ts";
export type { HookName, HookEventName } from "./hook-event-names.ts";
export { HOOK_EVENT_NAMES } from "./hook-event-names.ts";
export type { HookResultInit } from "./hook-result-entry.ts";
export { createHookResultEntry } from "./hook-result-entry.ts";
export type { SessionHooks, SessionHooksOptions } from "./session-hooks.ts";
export { createSessionHooks } from "./session-hooks.ts";
export type { TapOnly, PluginHooks, HookPlugin } from "./hook-plugin.ts";
export { applyPlugins } from "./hook-plugin.ts";
