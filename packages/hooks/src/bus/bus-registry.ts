import type { HookDeclaration } from "../kinds/hook-declaration.ts";
import type { TapGuardContext } from "../kinds/tap-guard.ts";

/** A hook a group declared on a bus, with what the hooks package knows about it. */
export interface DeclaredHookEntry {
  /** The hook itself (an `AsyncParallelHook`, `AsyncSeriesWaterfallHook` or `GateHook`). */
  hook: object;
  declaration: HookDeclaration;
}

/** What the hooks package keeps per bus, for as long as the bus lives (keyed weakly by the bus). */
export interface BusState {
  /** The bus's sinks; the hooks of every group created on it are bound to them. */
  context: TapGuardContext;
  /** Namespace → the accessor that created the group and the group. */
  groups: Map<string, { definition: object; group: object }>;
  /** Every declared hook on the bus, in creation order. */
  declared: DeclaredHookEntry[];
  /** Called with each declared hook created after the listener subscribed (command hooks subscribe here). */
  listeners: Array<(entry: DeclaredHookEntry) => void>;
}

const buses = new WeakMap<object, BusState>();
/** Plugin view → the bus it was made from and the plugin it was made for. */
const views = new WeakMap<object, { bus: object; pluginName: string }>();

/** Called by `createSessionHooks` once per bus. */
export function registerBus(bus: object, context: TapGuardContext): void {
  buses.set(bus, { context, groups: new Map(), declared: [], listeners: [] });
}

/** Called by `applyPlugins` for each view it hands to a plugin. */
export function registerPluginView(view: object, bus: object, pluginName: string): void {
  views.set(view, { bus, pluginName });
}

/** The bus behind a bus or a plugin view, and the plugin's name for a view; undefined for anything else. */
export function resolveBus(
  busOrView: unknown,
): { bus: object; state: BusState; pluginName?: string } | undefined {
  if (typeof busOrView !== "object" || busOrView === null) return undefined;
  const owner = views.get(busOrView);
  if (owner !== undefined) {
    const state = buses.get(owner.bus);
    return state === undefined ? undefined : { bus: owner.bus, state, pluginName: owner.pluginName };
  }
  const state = buses.get(busOrView);
  return state === undefined ? undefined : { bus: busOrView, state };
}

/** Adds a group's hooks to the bus's list and tells the subscribers. */
export function addDeclaredHooks(state: BusState, entries: readonly DeclaredHookEntry[]): void {
  state.declared.push(...entries);
  for (const entry of entries) for (const listener of state.listeners) listener(entry);
}

/**
 * Calls `listener` with every hook declared on the bus behind `busOrView`: those that exist now, then each
 * one a group creates later (groups are created on first use, often after plugins were applied).
 */
export function onDeclaredHooks(busOrView: unknown, listener: (entry: DeclaredHookEntry) => void): void {
  const owner = resolveBus(busOrView);
  if (owner === undefined) return;
  for (const entry of owner.state.declared) listener(entry);
  owner.state.listeners.push(listener);
}
