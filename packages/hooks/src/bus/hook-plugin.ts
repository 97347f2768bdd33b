import { describeError } from "../describe-error.ts";
import { HookError } from "../hook-error.ts";
import { HOOK_EVENT_NAMES, type HookName } from "../hook-event-names.ts";
import { registerPluginView } from "./bus-registry.ts";
import type { SessionHooks } from "./session-hooks.ts";

type TapMethodName = "tap" | "tapAsync" | "tapPromise";

/** The part of a hook a plugin may touch: its `tap*` methods, never `call` / `promise` / `intercept`. */
export type TapOnly<H> = Pick<H, Extract<keyof H, TapMethodName>>;

/** The bus as a plugin sees it. */
export type PluginHooks = { readonly [K in keyof SessionHooks]: TapOnly<SessionHooks[K]> };

/** A plugin: `apply` is called once per session, when the bus is created, and taps what it needs. */
export interface HookPlugin {
  /** Unique among the session's plugins; every tap the plugin makes is named after it (for `before`). */
  readonly name: string;
  /**
   * Called once with the tap-only view of a fresh bus; taps registered here live as long as the session.
   * Hooks other packages declare are reached through their accessor: `getTaskHooks(hooks).taskSettled.tap…`.
   */
  apply(hooks: PluginHooks): void;
}

type TapOptionsArgument = string | { name: string; stage?: number; before?: string };
type AnyTap = (options: TapOptionsArgument, fn: unknown) => void;

/**
 * The tap-only view of one hook for one plugin. The tap is named after the plugin whatever name was passed,
 * so `before` and reports use plugin names.
 */
export function tapOnlyView(hook: object, pluginName: string): object {
  const methods: Record<string, unknown> = {};
  const tapMethods = hook as Record<TapMethodName, AnyTap>;
  for (const method of ["tap", "tapAsync", "tapPromise"] as const) {
    methods[method] = (options: TapOptionsArgument, fn: unknown) =>
      tapMethods[method].call(
        hook,
        typeof options === "string" ? pluginName : { ...options, name: pluginName },
        fn,
      );
  }
  return Object.freeze(methods);
}

function pluginView(hooks: SessionHooks, pluginName: string): PluginHooks {
  const view: Record<string, unknown> = {};
  for (const name of Object.keys(HOOK_EVENT_NAMES) as HookName[]) {
    view[name] = tapOnlyView(hooks[name], pluginName);
  }
  Object.freeze(view);
  // Hook group accessors map the view back to its bus and plugin (see `defineHookGroup`).
  registerPluginView(view, hooks, pluginName);
  return view as unknown as PluginHooks;
}

/**
 * Lets each plugin tap the bus through a tap-only view. Throws a `HookError` when two plugins share a name
 * or a plugin's `apply` throws: a misconfigured plugin list fails when the session is set up, not mid-way.
 */
export function applyPlugins(hooks: SessionHooks, plugins: readonly HookPlugin[]): void {
  const seen = new Set<string>();
  for (const plugin of plugins) {
    if (typeof plugin.name !== "string" || plugin.name.length === 0) {
      throw new HookError("A plugin has no name; give every plugin a unique, non-empty `name`.", {
        hook: "apply",
        handler: "(unnamed)",
      });
    }
    if (seen.has(plugin.name)) {
      throw new HookError(
        `Two plugins are named "${plugin.name}"; plugin names must be unique per session because taps are ordered by name. Rename one of them.`,
        { hook: "apply", handler: plugin.name },
      );
    }
    seen.add(plugin.name);
    try {
      plugin.apply(pluginView(hooks, plugin.name));
    } catch (error) {
      throw new HookError(
        `Plugin "${plugin.name}" threw from apply() (${describeError(error)}); fix the plugin or leave it out of the list.`,
        { hook: "apply", handler: plugin.name, cause: error },
      );
    }
  }
}
