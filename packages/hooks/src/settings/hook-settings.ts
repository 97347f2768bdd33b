import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describeError } from "../describe-error.ts";
import { HookSettingsError } from "../hook-error.ts";
import { CLAUDE_CODE_ONLY_EVENT_NAMES, HOOK_EVENT_NAMES } from "../hook-event-names.ts";
import { isRecord } from "../is-record.ts";
import { closestName } from "./closest-name.ts";

/** One hook command, as written in a settings file. */
export interface CommandHookDefinition {
  type: "command";
  /** Run with the system shell; `$CLAUDE_PROJECT_DIR` and `$UNFORGET_PROJECT_DIR` are set. */
  command: string;
  /** Seconds before the command's whole process group is killed (fractions allowed). */
  timeout?: number;
}

/** Commands that run when the event's matcher value (trigger, source, tool name, …) matches. */
export interface HookMatcherGroup {
  matcher?: string;
  hooks: CommandHookDefinition[];
}

/** Event name ("PreCompact", "SessionStart", …) → matcher groups, in load order. */
export type HookCommandSettings = Record<string, HookMatcherGroup[]>;

export interface LoadedHookSettings {
  hooks: HookCommandSettings;
  /** Files that were found and read, in the order their hooks were merged. */
  files: string[];
  /** Files or entries that were skipped, each with what to fix. Loading never throws for them. */
  problems: HookSettingsError[];
}

export interface ParseHookSettingsOptions {
  /**
   * Event names that hook groups declare (e.g. `getTaskHooks.eventNames`), valid besides the bus's own and
   * Claude Code's. Any other event key is reported in `problems` with the closest valid name.
   */
  eventNames?: readonly string[];
}

export interface LoadHookSettingsOptions extends ParseHookSettingsOptions {
  /** The project root: `.claude/` and `.unforget/` settings are read from here. */
  projectDir: string;
  /** The user's home directory; defaults to `os.homedir()`. */
  homeDir?: string;
}

/**
 * The settings files hooks are read from, lowest precedence first: user, project, local project; for each,
 * Claude Code's file and then ours. Hooks from every file run (they are merged, not overridden).
 */
export function hookSettingsPaths(options: LoadHookSettingsOptions): string[] {
  const home = resolve(options.homeDir ?? homedir());
  const project = resolve(options.projectDir);
  const paths = [
    join(home, ".claude", "settings.json"),
    join(home, ".unforget", "settings.json"),
    join(project, ".claude", "settings.json"),
    join(project, ".unforget", "settings.json"),
    join(project, ".claude", "settings.local.json"),
    join(project, ".unforget", "settings.local.json"),
  ];
  return [...new Set(paths)];
}

/**
 * Says what is wrong with an event key nothing knows. Its hooks are kept: a hook group the caller did not list
 * in `eventNames` may still declare it.
 */
function unknownEventProblem(eventName: string, eventNames: readonly string[]): string | undefined {
  const known = [...Object.values(HOOK_EVENT_NAMES), ...CLAUDE_CODE_ONLY_EVENT_NAMES, ...eventNames];
  if (known.includes(eventName)) return undefined;
  const closest = closestName(eventName, known);
  const hint =
    closest === undefined
      ? "neither one of the bus's, nor Claude Code's, nor one passed in eventNames"
      : closest.distance === 0
        ? `did you mean "${closest.name}"? Event names must match exactly, case included`
        : `did you mean "${closest.name}"?`;
  return `hooks.${eventName} is not an event Unforget knows (${hint}); its hooks run only if a hook group declares "${eventName}".`;
}

/** Reads the `hooks` section of one parsed settings file; malformed parts are skipped and described. */
export function parseHookSettings(
  settings: unknown,
  path: string,
  options: ParseHookSettingsOptions = {},
): { hooks: HookCommandSettings; problems: HookSettingsError[] } {
  const hooks: HookCommandSettings = {};
  const problems: HookSettingsError[] = [];
  const problem = (message: string) => problems.push(new HookSettingsError(`${path}: ${message}`, { path }));
  if (!isRecord(settings)) {
    problem('the file is not a JSON object; it was skipped. Write an object such as {"hooks": {}}.');
    return { hooks, problems };
  }
  if (settings.hooks === undefined) return { hooks, problems };
  if (!isRecord(settings.hooks)) {
    problem('"hooks" is not an object of event names; it was skipped.');
    return { hooks, problems };
  }
  for (const [eventName, groups] of Object.entries(settings.hooks)) {
    const unknown = unknownEventProblem(eventName, options.eventNames ?? []);
    if (unknown !== undefined) problem(unknown);
    if (!Array.isArray(groups)) {
      problem(`hooks.${eventName} is not an array of matcher groups; it was skipped.`);
      continue;
    }
    const parsed: HookMatcherGroup[] = [];
    groups.forEach((group, groupIndex) => {
      const where = `hooks.${eventName}[${groupIndex}]`;
      if (!isRecord(group) || !Array.isArray(group.hooks)) {
        problem(`${where} needs a "hooks" array; it was skipped.`);
        return;
      }
      if (group.matcher !== undefined && typeof group.matcher !== "string") {
        problem(`${where}.matcher must be a string; the group was skipped.`);
        return;
      }
      const commands: CommandHookDefinition[] = [];
      group.hooks.forEach((hook, hookIndex) => {
        const hookWhere = `${where}.hooks[${hookIndex}]`;
        if (!isRecord(hook) || hook.type !== "command") {
          problem(
            `${hookWhere} is not {"type": "command"}; only command hooks are supported, it was skipped.`,
          );
          return;
        }
        if (typeof hook.command !== "string" || hook.command.trim() === "") {
          problem(`${hookWhere}.command must be a non-empty string; it was skipped.`);
          return;
        }
        if (hook.timeout !== undefined && (typeof hook.timeout !== "number" || !(hook.timeout > 0))) {
          problem(`${hookWhere}.timeout must be a positive number of seconds; it was skipped.`);
          return;
        }
        commands.push(
          hook.timeout === undefined
            ? { type: "command", command: hook.command }
            : { type: "command", command: hook.command, timeout: hook.timeout },
        );
      });
      if (commands.length > 0) {
        parsed.push(
          group.matcher === undefined ? { hooks: commands } : { matcher: group.matcher, hooks: commands },
        );
      }
    });
    if (parsed.length > 0) hooks[eventName] = parsed;
  }
  return { hooks, problems };
}

/**
 * Loads hook commands from the user and project settings files (Claude Code's and ours). Missing files are
 * skipped silently; unreadable or malformed ones are skipped and listed in `problems`.
 */
export async function loadHookSettings(options: LoadHookSettingsOptions): Promise<LoadedHookSettings> {
  const result: LoadedHookSettings = { hooks: {}, files: [], problems: [] };
  for (const path of hookSettingsPaths(options)) {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      result.problems.push(
        new HookSettingsError(
          `${path} could not be read (${describeError(error)}); its hooks were skipped.`,
          {
            path,
            cause: error,
          },
        ),
      );
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      result.problems.push(
        new HookSettingsError(
          `${path} is not valid JSON (${describeError(error)}); its hooks were skipped. Fix the file.`,
          { path, cause: error },
        ),
      );
      continue;
    }
    result.files.push(path);
    const parsed = parseHookSettings(json, path, options);
    result.problems.push(...parsed.problems);
    for (const [eventName, groups] of Object.entries(parsed.hooks)) {
      result.hooks[eventName] = [...(result.hooks[eventName] ?? []), ...groups];
    }
  }
  return result;
}
