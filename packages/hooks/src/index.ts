export type { HookGroup, HookGroupAccessor, PluginHookGroup } from "./bus/hook-group.ts";
export { defineHookGroup } from "./bus/hook-group.ts";
export type { HookPlugin, PluginHooks, TapOnly } from "./bus/hook-plugin.ts";
export { applyPlugins } from "./bus/hook-plugin.ts";
export type { SessionHooks, SessionHooksOptions } from "./bus/session-hooks.ts";
export { createSessionHooks } from "./bus/session-hooks.ts";
export type { CommandHooksPluginOptions } from "./commands/command-hooks-plugin.ts";
export { createCommandHooksPlugin } from "./commands/command-hooks-plugin.ts";
export { matchesHookMatcher } from "./commands/hook-matcher.ts";
export type { HookCommandRun, RunHookCommandOptions } from "./commands/run-hook-command.ts";
export { runHookCommand } from "./commands/run-hook-command.ts";
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
export type { HookResultInit } from "./hook-result-entry.ts";
export { createHookResultEntry } from "./hook-result-entry.ts";
export type { GateDecision, GateHook } from "./kinds/gate-hook.ts";
export { createGateHook } from "./kinds/gate-hook.ts";
export type { CommandContext, DeclaredHookOptions, HookArgumentNames } from "./kinds/hook-declaration.ts";
export { createObserverHook } from "./kinds/observer-hook.ts";
export type { PreToolUseHook } from "./kinds/pre-tool-use-hook.ts";
export type { TransformHookOptions } from "./kinds/transform-hook.ts";
export { createTransformHook } from "./kinds/transform-hook.ts";
export type {
  CommandHookDefinition,
  HookCommandSettings,
  HookMatcherGroup,
  LoadedHookSettings,
  LoadHookSettingsOptions,
  ParseHookSettingsOptions,
} from "./settings/hook-settings.ts";
export { hookSettingsPaths, loadHookSettings, parseHookSettings } from "./settings/hook-settings.ts";
