import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, resolve } from "node:path";
import { hookSettingsPaths } from "@unforget/hooks";
import { PermissionRuleError, type PermissionRuleSource, parsePermissionRule } from "./permission-rule.ts";
import { PERMISSION_MODES, type PermissionMode, type PermissionRuleLists } from "./permission-types.ts";

export interface LoadPermissionSettingsOptions {
  /** The project root: `.claude/settings.json`, `.claude/settings.local.json` (and `.unforget/` ones) are read here. */
  projectDir: string;
  /** Default `os.homedir()`: `~/.claude/settings.json` is read there. */
  homeDir?: string;
}

/** The `permissions` of every settings file, ready for `createPermissionGate`. */
export interface LoadedPermissionSettings {
  /** Each file's rules with its source (`/path` patterns are relative to the file's project, or home). */
  sources: (PermissionRuleLists & { source: PermissionRuleSource })[];
  /** `defaultMode` of the most specific file that sets one (local, then project, then user). */
  defaultMode?: PermissionMode;
  /** Every file's `additionalDirectories`, resolved against its project. */
  additionalDirectories: string[];
  /** Rules and keys that were skipped, each saying what to fix. Loading never throws for them. */
  problems: PermissionRuleError[];
}

function sourceName(file: string, root: string, home: string): string {
  if (root === home) return "user";
  return basename(file) === "settings.local.json" ? "local" : "project";
}

/** `~/x` is in the home directory; other relative folders are relative to the settings file's project. */
function resolveDirectory(dir: string, root: string, home: string): string {
  return dir === "~" || dir.startsWith("~/") ? resolve(home, dir.slice(2)) : resolve(root, dir);
}

/**
 * Reads `permissions: { allow, deny, ask, defaultMode, additionalDirectories }` from Claude Code's settings files
 * (and `.unforget/` ones), lowest precedence first. Rules from every file apply (deny beats ask beats allow,
 * whichever file they are in); a rule that cannot be read is skipped and reported in `problems`.
 */
export async function loadPermissionSettings(
  options: LoadPermissionSettingsOptions,
): Promise<LoadedPermissionSettings> {
  const result: LoadedPermissionSettings = { sources: [], additionalDirectories: [], problems: [] };
  const home = resolve(options.homeDir ?? homedir());
  for (const file of hookSettingsPaths({ projectDir: options.projectDir, homeDir: home })) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      result.problems.push(
        new PermissionRuleError(
          `${file} could not be read as JSON (${(error as Error).message}); its permissions were skipped.`,
          { rule: "", file },
        ),
      );
      continue;
    }
    const permissions = (json as { permissions?: unknown } | null)?.permissions;
    if (permissions === undefined) continue;
    if (typeof permissions !== "object" || permissions === null || Array.isArray(permissions)) {
      result.problems.push(
        new PermissionRuleError(`permissions in ${file} must be an object; it was skipped.`, {
          rule: "",
          file,
        }),
      );
      continue;
    }
    const root = dirname(dirname(file));
    const source: PermissionRuleSource = { name: sourceName(file, root, home), file, root };
    const lists: PermissionRuleLists = {};
    const entries = permissions as Record<string, unknown>;
    for (const behavior of ["allow", "deny", "ask"] as const) {
      const list = entries[behavior];
      if (list === undefined) continue;
      if (!Array.isArray(list)) {
        result.problems.push(
          new PermissionRuleError(
            `permissions.${behavior} in ${file} must be a list of rules; it was skipped.`,
            { rule: "", file },
          ),
        );
        continue;
      }
      lists[behavior] = list.filter((text): text is string => {
        try {
          if (typeof text !== "string")
            throw new PermissionRuleError(
              `A ${behavior} rule in ${file} is not a string: ${JSON.stringify(text)}; it was skipped.`,
              { rule: String(text), file },
            );
          parsePermissionRule(text, behavior, source);
          return true;
        } catch (error) {
          result.problems.push(error as PermissionRuleError);
          return false;
        }
      });
    }
    result.sources.push({ ...lists, source });
    const mode = entries.defaultMode;
    if (typeof mode === "string" && (PERMISSION_MODES as readonly string[]).includes(mode))
      result.defaultMode = mode as PermissionMode;
    else if (mode !== undefined)
      result.problems.push(
        new PermissionRuleError(
          `permissions.defaultMode in ${file} is ${JSON.stringify(mode)}; use one of ${PERMISSION_MODES.join(", ")}.`,
          { rule: "", file },
        ),
      );
    const extra = entries.additionalDirectories;
    if (Array.isArray(extra))
      result.additionalDirectories.push(
        ...extra.filter((dir) => typeof dir === "string").map((dir) => resolveDirectory(dir, root, home)),
      );
    else if (extra !== undefined)
      result.problems.push(
        new PermissionRuleError(
          `permissions.additionalDirectories in ${file} must be a list of folders; it was skipped.`,
          { rule: "", file },
        ),
      );
  }
  return result;
}
