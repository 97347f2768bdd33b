import { describeError } from "../describe-error.ts";
import { HookError } from "../hook-error.ts";
import { HOOK_EVENT_NAMES } from "../hook-event-names.ts";
import { declarationOf } from "../kinds/hook-declaration.ts";
import { addDeclaredHooks, type BusState, type DeclaredHookEntry, resolveBus } from "./bus-registry.ts";
import { type PluginHooks, type TapOnly, tapOnlyView } from "./hook-plugin.ts";
import type { SessionHooks } from "./session-hooks.ts";

/**
 * What a group's `create` returns: an object of hooks made by `createObserverHook`, `createTransformHook` and
 * `createGateHook` (checked when the group is created: any other value is a `HookError`).
 */
export type HookGroup = { readonly [name: string]: object };

/** A group as a plugin sees it: only the `tap*` methods, every tap named after the plugin. */
export type PluginHookGroup<G> = { readonly [K in keyof G]: TapOnly<G[K]> };

/** Returns a package's hooks on a session's bus; see `defineHookGroup`. */
export interface HookGroupAccessor<G extends HookGroup> {
  /** With the bus: the group itself (fire with `.promise(...)`), created on first use, then the same object. */
  (bus: SessionHooks): Readonly<G>;
  /** With the view a plugin's `apply` received: the tap-only view of the same group, taps named after the plugin. */
  (hooks: PluginHooks): PluginHookGroup<G>;
  /** The namespace the group was defined with. */
  readonly namespace: string;
  /**
   * The `eventName`s of the group's hooks (what settings files use), e.g. to pass to `loadHookSettings`.
   * Read by calling `create` once, off any bus.
   */
  readonly eventNames: readonly string[];
}

function groupError(namespace: string, message: string, cause?: unknown): HookError {
  return new HookError(message, { hook: "defineHookGroup", handler: namespace, cause });
}

/** Calls `create` and checks that every member is a declared hook that belongs to no bus yet. */
function createMembers(
  namespace: string,
  create: () => object,
): { group: object; entries: DeclaredHookEntry[] } {
  let group: object;
  try {
    group = create();
  } catch (error) {
    throw groupError(
      namespace,
      `Creating the "${namespace}" hook group threw (${describeError(error)}); its create() must only create hooks.`,
      error,
    );
  }
  if (typeof group !== "object" || group === null) {
    throw groupError(
      namespace,
      `The "${namespace}" hook group's create() did not return an object of hooks.`,
    );
  }
  const seen = new Set<object>();
  const entries = Object.entries(group).map(([key, hook]): DeclaredHookEntry => {
    const declaration = declarationOf(hook);
    if (declaration === undefined) {
      throw groupError(
        namespace,
        `Member "${key}" of the "${namespace}" hook group is not a hook made by createObserverHook, createTransformHook or createGateHook; only those get the bus's guards.`,
      );
    }
    if (declaration.binding.context !== undefined || seen.has(hook)) {
      throw groupError(
        namespace,
        `Member "${key}" of the "${namespace}" hook group already belongs to a bus; create() must create new hooks on every call (one set per session), never return shared ones.`,
      );
    }
    seen.add(hook);
    return { hook, declaration };
  });
  return { group, entries };
}

/** Event names must be unique on a bus: command hooks subscribe by them. */
function checkEventNames(namespace: string, entries: readonly DeclaredHookEntry[], state: BusState): void {
  const taken = new Set<string>([
    ...Object.values(HOOK_EVENT_NAMES),
    ...state.declared.flatMap((entry) => entry.declaration.eventName ?? []),
  ]);
  for (const { declaration } of entries) {
    const eventName = declaration.eventName;
    if (eventName === undefined) continue;
    if (taken.has(eventName)) {
      throw groupError(
        namespace,
        `The "${namespace}" hook group declares the event "${eventName}", which another hook on this bus already uses; give it another eventName.`,
      );
    }
    taken.add(eventName);
  }
}

/**
 * Declares a package's own hooks on the per-session bus, as webpack's `getCompilationHooks(compilation)`
 * does: the returned accessor creates the group the first time it is used with a bus (calling `create`),
 * binds its hooks to the bus's sinks (`onHookError`, `onHookResult`, session id), freezes it, and returns
 * the same object afterwards. The guards of the bus's own hooks apply: observers are isolated, transforms
 * only append, gates fail closed. With a plugin view it returns the tap-only view of the same group.
 * Throws a `HookError` when another definition already used `namespace` on the bus, when `create` throws or
 * returns anything but hooks made by the `create…Hook` functions, or when an `eventName` is already taken.
 */
export function defineHookGroup<G extends HookGroup>(
  namespace: string,
  create: () => G,
): HookGroupAccessor<G> {
  if (typeof namespace !== "string" || namespace.trim() === "") {
    throw groupError(
      String(namespace),
      "A hook group needs a non-empty namespace, such as the package's name.",
    );
  }
  const groups = new WeakMap<object, Readonly<G>>();
  const pluginGroups = new WeakMap<object, PluginHookGroup<G>>();
  let eventNames: readonly string[] | undefined;

  const groupOn = (bus: object, state: BusState): Readonly<G> => {
    const existing = groups.get(bus);
    if (existing !== undefined) return existing;
    const taken = state.groups.get(namespace);
    if (taken !== undefined) {
      throw groupError(
        namespace,
        `Two different hook groups use the namespace "${namespace}" on this bus; give each package's group its own namespace (is the package installed twice?).`,
      );
    }
    const members = createMembers(namespace, create);
    const entries = members.entries;
    checkEventNames(namespace, entries, state);
    for (const { declaration } of entries) declaration.binding.context = state.context;
    const group = Object.freeze(members.group) as Readonly<G>;
    groups.set(bus, group);
    state.groups.set(namespace, { definition: accessor, group });
    addDeclaredHooks(state, entries);
    return group;
  };

  const accessor = ((busOrView: SessionHooks | PluginHooks) => {
    const owner = resolveBus(busOrView);
    if (owner === undefined) {
      throw groupError(
        namespace,
        `The "${namespace}" hook group was asked for with something that is not a session bus; pass the bus from createSessionHooks() or the hooks a plugin's apply() received.`,
      );
    }
    const group = groupOn(owner.bus, owner.state);
    if (owner.pluginName === undefined) return group;
    const cached = pluginGroups.get(busOrView);
    if (cached !== undefined) return cached;
    const view: Record<string, object> = {};
    for (const [key, hook] of Object.entries(group)) view[key] = tapOnlyView(hook, owner.pluginName);
    const pluginGroup = Object.freeze(view) as PluginHookGroup<G>;
    pluginGroups.set(busOrView, pluginGroup);
    return pluginGroup;
  }) as HookGroupAccessor<G>;

  Object.defineProperties(accessor, {
    namespace: { value: namespace, enumerable: true },
    eventNames: {
      enumerable: true,
      get() {
        // The probe's hooks are never bound to a bus and are dropped at once.
        eventNames ??= Object.freeze(
          createMembers(namespace, create).entries.flatMap((entry) => entry.declaration.eventName ?? []),
        );
        return eventNames;
      },
    },
  });
  return accessor;
}
