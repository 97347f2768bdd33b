export type { CommandHooksPluginOptions } from "./command-hooks-plugin.ts";
export { createCommandHooksPlugin } from "./command-hooks-plugin.ts";
export type { GateDecision, GateHook } from "./gate-hook.ts";
export { createGateHook } from "./gate-hook.ts";
export type { CommandContext, DeclaredHookOptions, HookArgumentNames } from "./hook-declaration.ts";
export { HookError, HookSettingsError } from "./hook-error.ts";
export type { HookEventName, HookName } from "./hook-event-names.ts";
export { HOOK_EVENT_NAMES } from "./hook-event-names.ts";
export type {
  HookAttachments,
  HookVeto,
  PostCompactEvent,
  PostSamplingEvent,
  PostToolUseEvent,
  PreCompactEvent,
  PreCompactResult,
  PreToolUseDecision,
  PreToolUseEvent,
  SessionEndEvent,
  SessionEventBase,
  SessionStartEvent,
  SessionStartSource,
  UserPromptSubmitEvent,
} from "./hook-events.ts";
export { PROMPT_BLOCK_ATTACHMENT_KIND } from "./hook-events.ts";
export type { HookGroup, HookGroupAccessor, PluginHookGroup } from "./hook-group.ts";
export { defineHookGroup } from "./hook-group.ts";
export { matchesHookMatcher } from "./hook-matcher.ts";
export type { HookPlugin, PluginHooks, TapOnly } from "./hook-plugin.ts";
export { applyPlugins } from "./hook-plugin.ts";
export type { HookResultInit } from "./hook-result-entry.ts";
export { createHookResultEntry } from "./hook-result-entry.ts";
export type {
  CommandHookDefinition,
  HookCommandSettings,
  HookMatcherGroup,
  LoadedHookSettings,
  LoadHookSettingsOptions,
  ParseHookSettingsOptions,
} from "./hook-settings.ts";
export { hookSettingsPaths, loadHookSettings, parseHookSettings } from "./hook-settings.ts";
export { createObserverHook } from "./observer-hook.ts";
export type { PreToolUseHook } from "./pre-tool-use-hook.ts";
export type { HookCommandRun, RunHookCommandOptions } from "./run-hook-command.ts";
export { runHookCommand } from "./run-hook-command.ts";
export type { SessionHooks, SessionHooksOptions } from "./session-hooks.ts";
export { createSessionHooks } from "./session-hooks.ts";
export type { TransformHookOptions } from "./transform-hook.ts";
export { createTransformHook } from "./transform-hook.ts";
