import type { GuardSpec, HookBinding } from "./tap-guard.ts";

/** One name per argument of a hook, as tapable takes them (`["event"]`, `["value", "event"]`). */
export type HookArgumentNames<Args extends unknown[]> = { readonly [K in keyof Args]: string };

/** The event of a hook's arguments: by convention the last one (`[Event]`, `[Value, Event]`). */
export type EventOf<Args extends unknown[]> = Args extends [...unknown[], infer Event] ? Event : never;

/** Options every declared hook takes. */
export interface DeclaredHookOptions<Event> {
  /**
   * The name settings files and command hooks use for the event ("TaskSettled"), and the `event` of its
   * `hook_result` entries. Without it, command hooks cannot subscribe and entries carry the hook's name.
   */
  eventName?: string;
  /** The value command hook matchers are tested against (a status, a tool name); default: every group runs. */
  matcherValue?: (event: Event) => string | undefined;
}

/** What one command hook printed for an event, as a transform hook may add it to its value. */
export interface CommandContext {
  /** The command's text output (plain stdout, or `hookSpecificOutput.additionalContext`). */
  text: string;
  /** The command line that printed it. */
  command: string;
}

type HookKind = "observer" | "transform" | "gate";

/** What the hooks package knows about a hook made by `createObserverHook` / `…Transform…` / `…Gate…`. */
export interface HookDeclaration {
  kind: HookKind;
  /** The name it was created with ("taskSettled"). */
  name: string;
  /** The settings name, when command hooks may subscribe. */
  eventName: string | undefined;
  /** Filled in when the hook's group is first used with a bus. */
  binding: HookBinding;
  matcherValue: ((event: unknown) => string | undefined) | undefined;
  /** Transforms only: how command output joins the value; without it, commands only observe. */
  addCommandContext: ((value: unknown, contexts: readonly CommandContext[]) => unknown) | undefined;
}

const declarations = new WeakMap<object, HookDeclaration>();

/**
 * Builds a hook for a hook group and remembers what it is, so a group can bind it to a bus and command hooks
 * can subscribe to it. `build` receives the guard spec of a hook not bound to any bus yet.
 */
export function declaredHook<H extends object>(
  kind: HookKind,
  name: string,
  options: DeclaredHookOptions<never>,
  build: (spec: GuardSpec) => H,
  addCommandContext?: (value: never, contexts: readonly CommandContext[]) => unknown,
): H {
  const binding: HookBinding = {};
  const hook = build({ hook: name, event: options.eventName ?? name, binding });
  declarations.set(hook, {
    kind,
    name,
    eventName: options.eventName,
    binding,
    matcherValue: options.matcherValue as HookDeclaration["matcherValue"],
    addCommandContext: addCommandContext as HookDeclaration["addCommandContext"],
  });
  return hook;
}

/** The declaration of a hook made by a declaring constructor; undefined for anything else. */
export function declarationOf(value: unknown): HookDeclaration | undefined {
  return typeof value === "object" && value !== null ? declarations.get(value) : undefined;
}
