import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { CommandPattern } from "./permission-command.ts";
import type { PathContext } from "./permission-path.ts";
import {
  type PermissionBehavior,
  type PermissionRule,
  type PermissionRuleSource,
  parsePermissionRule,
} from "./permission-rule.ts";
import type {
  CanUseTool,
  PermissionGateOptions,
  PermissionMode,
  PermissionRuleLists,
  PermissionUpdate,
} from "./permission-types.ts";

/**
 * What one permission gate holds: its rules, mode and working directories (a user's answer may change all
 * three), and what it reads once (command rules' patterns, where the directories' symlinks lead).
 */
export interface GateState {
  /** `cwd` resolved, and the home folder as given (path patterns read `~` from it). */
  readonly context: PathContext;
  /** The home folder for `~` in commands. */
  readonly homeDir: string;
  /** The source of the rules a user's answer adds. */
  readonly sessionSource: PermissionRuleSource;
  /** Every rule in force, in the order it was added. */
  readonly rules: PermissionRule[];
  /** The working directories (absolute), `cwd` first. */
  readonly directories: string[];
  /** The working directories and where they lead through symlinks; read again after a directory is added. */
  realDirectories: Promise<string[]> | undefined;
  mode: PermissionMode;
  /** A command rule's specifier, read once. */
  readonly patterns: Map<string, CommandPattern>;
  /** Asked when a call needs an answer. */
  readonly canUseTool: CanUseTool | undefined;
}

/** The gate's state from its options; an unreadable rule throws `PermissionRuleError`. */
export function createGateState(options: PermissionGateOptions): GateState {
  const context: PathContext = { cwd: resolve(options.cwd), homeDir: options.homeDir };
  const state: GateState = {
    context,
    homeDir: options.homeDir ?? homedir(),
    sessionSource: { name: "session", root: context.cwd },
    rules: [],
    directories: [
      context.cwd,
      ...(options.additionalDirectories ?? []).map((dir) => resolve(context.cwd, dir)),
    ],
    realDirectories: undefined,
    mode: options.mode ?? "default",
    patterns: new Map(),
    canUseTool: options.canUseTool,
  };
  for (const { source, ...lists } of options.sources ?? []) addRuleLists(state, lists, source);
  if (options.rules !== undefined) addRuleLists(state, options.rules, { name: "options", root: context.cwd });
  return state;
}

/** Adds rule lists (deny, then ask, then allow) from one source. */
function addRuleLists(state: GateState, lists: PermissionRuleLists, source: PermissionRuleSource): void {
  for (const behavior of ["deny", "ask", "allow"] as const)
    for (const text of lists[behavior] ?? []) state.rules.push(parsePermissionRule(text, behavior, source));
}

/** Whether a rule with this text is there already (a suggestion or an update must not add it again). */
export function hasRule(state: GateState, behavior: PermissionBehavior, text: string): boolean {
  return state.rules.some((rule) => rule.behavior === behavior && rule.text === text);
}

/** Every rule in force, deny first, then ask, then allow. */
export function rulesInOrder(state: GateState): PermissionRule[] {
  return (["deny", "ask", "allow"] as const).flatMap((behavior) =>
    state.rules.filter((rule) => rule.behavior === behavior),
  );
}

/** The working directories as given and as reached through symlinks. */
export function workingDirectories(state: GateState): Promise<string[]> {
  state.realDirectories ??= Promise.all(state.directories.map((dir) => realpath(dir).catch(() => dir))).then(
    (real) => [...new Set([...state.directories, ...real])],
  );
  return state.realDirectories;
}

/** Applies updates for the rest of the session, as an "always" answer does; a bad rule throws and changes nothing. */
export function updateGate(state: GateState, updates: readonly PermissionUpdate[]): void {
  // Every rule is read before any update applies, so a bad one changes nothing.
  for (const update of updates)
    if (update.type === "addRules")
      for (const text of update.rules) parsePermissionRule(text, update.behavior, state.sessionSource);
  for (const update of updates) {
    if (update.type === "setMode") state.mode = update.mode;
    else if (update.type === "addDirectories") {
      // A folder or rule that is there already is not added again (two answers about the same call, a
      // `/permissions allow` of a rule the settings have): the list stays one line per rule.
      const fresh = update.directories
        .map((dir) => resolve(state.context.cwd, dir))
        .filter((dir) => !state.directories.includes(dir));
      state.directories.push(...new Set(fresh));
      state.realDirectories = undefined;
    } else {
      const fresh = [...new Set(update.rules)].filter((text) => !hasRule(state, update.behavior, text));
      addRuleLists(state, { [update.behavior]: fresh }, state.sessionSource);
    }
  }
}
