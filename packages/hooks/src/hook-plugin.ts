import { HookError } from "./hook-error.ts";
import type { HookName } from "./hook-event-names.ts";
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
  /** Called once with the tap-only view of a fresh bus; taps registered here live as long as the session. */
  apply(hooks: PluginHooks): void;
}

type TapOptionsArgument = string | { name: string; stage?: number; before?: string };
type AnyTap = (options: TapOptionsArgument, fn: unknown) => void;

function pluginView(hooks: SessionHooks, pluginName: string): PluginHooks {
  const view: Record<string, unknown> = {};
  for (const name of Object.keys(hooks) as HookName[]) {
    const hook = hooks[name] as unknown as Record<TapMethodName, AnyTap>;
    const methods: Record<string, unknown> = {};
    for (const method of ["tap", "tapAsync", "tapPromise"] as const) {
      // The tap is named after the plugin whatever name was passed, so `before` and reports use plugin names.
      methods[method] = (options: TapOptionsArgument, fn: unknown) =>
        hook[method].call(
          hook,
          typeof options === "string" ? pluginName : { ...options, name: pluginName },
          fn,
        );
    }
    view[name] = Object.freeze(methods);
  }
  return Object.freeze(view) as unknown as PluginHooks;
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
        `Plugin "${plugin.name}" threw from apply() (${error instanceof Error ? error.message : String(error)}); fix the plugin or leave it out of the list.`,
        { hook: "apply", handler: plugin.name, cause: error },
      );
    }
  }
}
