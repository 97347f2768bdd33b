import { resolve } from "node:path";
import type { CallFacts } from "./call-facts.ts";
import { type GateState, hasRule } from "./gate-state.ts";
import { suggestCommandRule } from "./permission-command.ts";
import { suggestPathPattern } from "./permission-path.ts";
import type { PermissionUpdate } from "./permission-types.ts";
import { allowedAlready } from "./rule-matching.ts";

/**
 * What "always" would add for a call the user is asked about: only what is not allowed already (a command an
 * allow rule covers is left out, a rule that is there is not suggested again).
 */
export function suggestionsFor(
  state: GateState,
  facts: CallFacts,
  outside: string | undefined,
): PermissionUpdate[] {
  return suggestionsOf(state, facts, outside).flatMap((update): PermissionUpdate[] => {
    if (update.type !== "addRules") return [update];
    const fresh = update.rules.filter((text) => !hasRule(state, update.behavior, text));
    return fresh.length === 0 ? [] : [{ ...update, rules: fresh }];
  });
}

/**
 * Every update that would allow the call: a prefix rule for each command, the folder of a path outside the
 * working directories, acceptEdits and an `Edit` rule for a file write, the tool otherwise.
 */
function suggestionsOf(state: GateState, facts: CallFacts, outside: string | undefined): PermissionUpdate[] {
  const { subject, tool, shell } = facts;
  if (shell !== undefined) {
    const updates: PermissionUpdate[] = [];
    const suggested = shell.commands.flatMap((command) => {
      if (command.transparent || allowedAlready(state, facts, command, shell.analyze)) return [];
      const rule = suggestCommandRule(command.words);
      return rule === undefined ? [] : [rule];
    });
    if (suggested.length > 0)
      updates.push({ type: "addRules", behavior: "allow", rules: [...new Set(suggested)] });
    if (outside !== undefined)
      updates.push({ type: "addDirectories", directories: [resolve(outside, "..")] });
    return updates;
  }
  if (subject?.kind === "path") {
    if (outside !== undefined) return [{ type: "addDirectories", directories: [resolve(outside, "..")] }];
    if (subject.access === "write")
      return [
        { type: "setMode", mode: "acceptEdits" },
        {
          type: "addRules",
          behavior: "allow",
          rules: [`Edit(${suggestPathPattern(facts.paths[0]!, state.context)})`],
        },
      ];
  }
  return [{ type: "addRules", behavior: "allow", rules: [tool.name] }];
}
