import type { CommandHookDefinition, HookCommandSettings } from "../settings/hook-settings.ts";
import { matchesEveryValue, matchesHookMatcher } from "./hook-matcher.ts";

/**
 * The commands configured for an event whose group matcher matches one of `values` (every group when
 * `values` is undefined: the event has nothing to match on; only groups without a matcher when it is empty). Identical commands configured in several files
 * or groups run once, as in Claude Code.
 */
export function matchingCommands(
  settings: HookCommandSettings,
  eventName: string,
  values: readonly string[] | undefined,
): CommandHookDefinition[] {
  const seen = new Set<string>();
  const commands: CommandHookDefinition[] = [];
  for (const group of settings[eventName] ?? []) {
    const matched =
      values === undefined ||
      matchesEveryValue(group.matcher) ||
      values.some((value) => matchesHookMatcher(group.matcher, value));
    if (!matched) continue;
    for (const hook of group.hooks) {
      if (seen.has(hook.command)) continue;
      seen.add(hook.command);
      commands.push(hook);
    }
  }
  return commands;
}
