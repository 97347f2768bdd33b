import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ThresholdSetting } from "@unforget/compact";
import { type HookCommandSettings, parseHookSettings } from "@unforget/hooks";
import type { McpServerConfig } from "@unforget/mcp";
import { type PermissionMode, type PermissionRuleSource, parsePermissionRule } from "@unforget/session";
import { SettingsError } from "../agent-errors.ts";
import { describeJsonError } from "../json-text.ts";
import { checkSettings } from "./settings-schema.ts";

/** Whose file it is: the user's own (always applies), the project's (needs trust), or the command line's. */
export type SettingsScope = "user" | "project" | "local" | "cli";

/** The settings of `~/.unforget/settings.json`, `.unforget/settings.json` and `--settings`. */
export interface AgentSettings {
  model?: string;
  provider?: "anthropic" | "bedrock" | "vertex";
  /** The context window the agent keeps to, at most the model's: tokens (`200000`) or `"200K"`, `"1M"`. */
  contextWindow?: number | string;
  /** Limits of models unforget does not know, or knows otherwise, by model id or family. */
  models?: Record<string, { contextWindow?: number; maxOutputTokens?: number }>;
  compaction?: {
    threshold?: ThresholdSetting;
    thresholds?: Record<string, ThresholdSetting>;
    proactive?: "auto" | "off";
    emergency?: "on" | "off";
    /** Layer name → false to switch it off (true to switch on one that is off by default). */
    layers?: Record<string, boolean>;
    /**
     * In the REPL, end the turn when an automatic compaction summarised the context while the model was working
     * through tool calls, before the request after it: read the summary (`/context`), then type to go on or
     * steer. Default false.
     */
    pauseAfterAuto?: boolean;
  };
  hooks?: unknown;
  permissions?: {
    allow?: string[];
    deny?: string[];
    ask?: string[];
    defaultMode?: PermissionMode;
    additionalDirectories?: string[];
  };
  memory?: {
    consent?: "propose" | "auto" | "off";
    recall?: "every-prompt" | "first-prompt" | "off";
    sessionNotes?: boolean;
  };
  /**
   * The history tools (`context_status`, `history_search`, `history_read`) and their paragraph in the system
   * prompt; default true, `false` turns them off.
   */
  history?: boolean;
  /**
   * The model (and provider, default the session's) that writes compaction summaries and session notes,
   * typically a cheaper one; default the session's model.
   */
  summarizer?: { model: string; provider?: "anthropic" | "bedrock" | "vertex" };
  mcpServers?: unknown;
  plugins?: string[];
  trustedProjects?: Record<string, { fingerprint: string; trustedAt?: string; items?: string[] }>;
}

/** One settings file, read and checked. */
export interface SettingsLayer {
  file: string;
  scope: SettingsScope;
  /** The folder relative paths of this file are resolved against (the project, or the home directory). */
  root: string;
  /** Claude Code's `.claude/settings*.json`: only `hooks` and `permissions` are read from it. */
  claudeCode: boolean;
  settings: AgentSettings;
  /** Hook commands, parsed (Claude Code's format). */
  hooks: HookCommandSettings;
  /** MCP servers by name, parsed (Claude Code's `.mcp.json` entries). */
  mcpServers: Record<string, McpServerConfig>;
  /** Plugin modules, absolute paths. */
  plugins: string[];
}

/** Where the settings files are, and what the command line added. */
export interface SettingsLocations {
  projectDir: string;
  homeDir?: string;
  /** `--settings`: files, or JSON text. */
  extra?: readonly string[];
  /** For `${VAR}` in MCP servers. */
  env?: Record<string, string | undefined>;
}

/** The loaded files, lowest precedence first, and what was skipped in Claude Code's files. */
export interface LoadedSettings {
  layers: SettingsLayer[];
  /** Problems in Claude Code's files: the part was skipped (those files are Claude Code's to validate). */
  warnings: string[];
  /** The user's own `~/.unforget/settings.json` (where trust is remembered). */
  userFile: string;
}

/** The folder of the user's files: `~/.unforget`. */
export function unforgetHome(homeDir: string): string {
  return join(homeDir, ".unforget");
}

interface FileSpec {
  file: string;
  scope: SettingsScope;
  root: string;
  claudeCode: boolean;
}

function settingsFiles(projectDir: string, home: string): FileSpec[] {
  const user = (file: string, claudeCode: boolean): FileSpec => ({
    file,
    scope: "user",
    root: home,
    claudeCode,
  });
  const project = (file: string, scope: SettingsScope, claudeCode: boolean): FileSpec => ({
    file: join(projectDir, file),
    scope,
    root: projectDir,
    claudeCode,
  });
  const files = [
    user(join(home, ".claude", "settings.json"), true),
    user(join(unforgetHome(home), "settings.json"), false),
    project(".claude/settings.json", "project", true),
    project(".unforget/settings.json", "project", false),
    project(".claude/settings.local.json", "local", true),
    project(".unforget/settings.local.json", "local", false),
  ];
  // Run from the home folder, the user's files are not a project's.
  const seen = new Set<string>();
  return files.filter((spec) => !seen.has(spec.file) && seen.add(spec.file));
}

/** Reads every settings file that exists; our own files must be valid (a `SettingsError` names file and key). */
export async function loadSettings(locations: SettingsLocations): Promise<LoadedSettings> {
  const home = resolve(locations.homeDir ?? homedir());
  const projectDir = resolve(locations.projectDir);
  const loaded: LoadedSettings = {
    layers: [],
    warnings: [],
    userFile: join(unforgetHome(home), "settings.json"),
  };
  for (const spec of settingsFiles(projectDir, home)) {
    const text = await readOptional(spec.file);
    if (text === undefined) continue;
    const layer = await parseSettingsLayer(text, spec, locations.env, loaded.warnings);
    if (layer) loaded.layers.push(layer);
  }
  for (const extra of locations.extra ?? []) {
    const inline = extra.trimStart().startsWith("{");
    const file = inline ? "--settings" : resolve(extra);
    const text = inline ? extra : await readOptional(file);
    if (text === undefined)
      throw new SettingsError(`--settings ${extra}: there is no such file.`, { file, key: "" });
    const layer = await parseSettingsLayer(
      text,
      { file, scope: "cli", root: inline ? projectDir : dirname(file), claudeCode: false },
      locations.env,
      loaded.warnings,
    );
    if (layer) loaded.layers.push(layer);
  }
  return loaded;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new SettingsError(`${file} could not be read (${(error as Error).message}).`, {
      file,
      key: "",
      cause: error,
    });
  }
}

async function parseSettingsLayer(
  text: string,
  spec: FileSpec,
  env: Record<string, string | undefined> | undefined,
  warnings: string[],
): Promise<SettingsLayer | undefined> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = `${spec.file} is not valid JSON, ${await describeJsonError(text)}; fix the ${spec.file === "--settings" ? "text" : "file"}.`;
    if (spec.claudeCode) {
      warnings.push(`${message} Its hooks and permissions were skipped.`);
      return undefined;
    }
    throw new SettingsError(message, { file: spec.file, key: "", cause: error });
  }
  if (spec.claudeCode) return claudeCodeLayer(json, spec, warnings);
  // MCP's configuration parser loads only for a file that lists servers (start-up stays without it).
  const listsServers = typeof json === "object" && json !== null && "mcpServers" in json;
  const mcp = listsServers ? await import("@unforget/mcp") : undefined;
  await checkSettings(json, spec.file);
  return ownLayer(json, spec, env, mcp?.parseMcpConfig);
}

function ownLayer(
  json: unknown,
  spec: FileSpec,
  env: Record<string, string | undefined> | undefined,
  parseMcpConfig: typeof import("@unforget/mcp").parseMcpConfig | undefined,
): SettingsLayer {
  const settings = json as AgentSettings;
  const parsed = parseHookSettings({ hooks: settings.hooks }, spec.file);
  const hookProblem = parsed.problems[0];
  if (hookProblem) throw new SettingsError(hookProblem.message, { file: spec.file, key: "hooks" });
  for (const behavior of ["allow", "deny", "ask"] as const) {
    settings.permissions?.[behavior]?.forEach((rule, index) => {
      checkRule(rule, behavior, spec, `permissions.${behavior}[${index}]`);
    });
  }
  let mcpServers: Record<string, McpServerConfig> = {};
  if (settings.mcpServers !== undefined && parseMcpConfig) {
    try {
      mcpServers = parseMcpConfig(
        { mcpServers: settings.mcpServers },
        { file: spec.file, ...(env ? { env } : {}) },
      );
    } catch (error) {
      const key = (error as { key?: string }).key ?? "mcpServers";
      throw new SettingsError((error as Error).message, { file: spec.file, key, cause: error });
    }
  }
  return {
    ...spec,
    settings,
    hooks: parsed.hooks,
    mcpServers,
    plugins: (settings.plugins ?? []).map((plugin) => resolvePath(plugin, spec.root)),
  };
}

/** Claude Code's files: their `hooks` and `permissions`, each bad part skipped with a warning. */
function claudeCodeLayer(json: unknown, spec: FileSpec, warnings: string[]): SettingsLayer {
  const parsed = parseHookSettings(json, spec.file);
  warnings.push(...parsed.problems.map((problem) => `${problem.message}`));
  const permissions: NonNullable<AgentSettings["permissions"]> = {};
  const raw = (json as { permissions?: unknown } | null)?.permissions;
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
    warnings.push(`${spec.file}: permissions must be an object; it was skipped.`);
  } else if (raw) {
    const entries = raw as Record<string, unknown>;
    for (const behavior of ["allow", "deny", "ask"] as const) {
      const list = entries[behavior];
      if (list === undefined) continue;
      if (!Array.isArray(list)) {
        warnings.push(`${spec.file}: permissions.${behavior} must be a list of rules; it was skipped.`);
        continue;
      }
      permissions[behavior] = list.filter((rule, index): rule is string => {
        try {
          checkRule(rule, behavior, spec, `permissions.${behavior}[${index}]`);
          return true;
        } catch (error) {
          warnings.push(`${(error as Error).message} It was skipped.`);
          return false;
        }
      });
    }
    const mode = entries.defaultMode;
    if (
      typeof mode === "string" &&
      ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"].includes(mode)
    )
      permissions.defaultMode = mode as PermissionMode;
    else if (mode !== undefined)
      warnings.push(
        `${spec.file}: permissions.defaultMode ${JSON.stringify(mode)} is not a mode; it was skipped.`,
      );
    if (Array.isArray(entries.additionalDirectories))
      permissions.additionalDirectories = entries.additionalDirectories.filter(
        (dir): dir is string => typeof dir === "string",
      );
  }
  return { ...spec, settings: { permissions }, hooks: parsed.hooks, mcpServers: {}, plugins: [] };
}

function checkRule(rule: unknown, behavior: "allow" | "deny" | "ask", spec: FileSpec, key: string): void {
  if (typeof rule !== "string")
    throw new SettingsError(`${spec.file}: ${key} must be a rule such as "Bash(npm test:*)".`, {
      file: spec.file,
      key,
    });
  try {
    parsePermissionRule(rule, behavior, sourceOf(spec));
  } catch (error) {
    throw new SettingsError(`${spec.file}: ${key}: ${(error as Error).message}`, {
      file: spec.file,
      key,
      cause: error,
    });
  }
}

/** Where a layer's permission rules come from, as decisions name it. */
export function sourceOf(layer: Pick<SettingsLayer, "scope" | "file" | "root">): PermissionRuleSource {
  return layer.file === "--settings"
    ? { name: layer.scope, root: layer.root }
    : { name: layer.scope, file: layer.file, root: layer.root };
}

/** `~/x` is in the home folder; other relative paths are relative to the settings file's root. */
export function resolvePath(path: string, root: string, home = homedir()): string {
  if (path === "~" || path.startsWith("~/")) return resolve(home, path.slice(2));
  return resolve(root, path);
}
