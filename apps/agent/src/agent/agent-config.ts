import type { ContextManagerConfig } from "@unforget/compact";
import type { HookCommandSettings } from "@unforget/hooks";
import type { McpServerConfig } from "@unforget/mcp";
import type { PermissionMode, PermissionRuleLists, PermissionRuleSource } from "@unforget/session";
import { parseWindow } from "../parse-window.ts";
import { SettingsError } from "./agent-errors.ts";
import type { ModelLimitSettings } from "./model-names.ts";
import type { ProjectRunnables } from "./project-trust.ts";
import { type AgentSettings, type LoadedSettings, resolvePath, sourceOf } from "./settings/settings.ts";

/** What the settings files add up to, for this run. */
export interface AgentConfig {
  model?: string;
  provider?: string;
  /** The window the agent keeps to, in tokens (`contextWindow`), when the settings cap it. */
  contextWindow?: number;
  /** Model limits by model id or family (`models`), later files winning per model. */
  models: ModelLimitSettings;
  compaction: ContextManagerConfig;
  /** `compaction.pauseAfterAuto`: the REPL's turn ends after an automatic mid-turn compaction (default false). */
  pauseAfterCompaction: boolean;
  memory: NonNullable<AgentSettings["memory"]>;
  /** The history tools and their paragraph in the system prompt (`history`, default true). */
  history: boolean;
  /** The model (and provider) that writes summaries and session notes (`summarizer`), when not the session's. */
  summarizer?: { model: string; provider?: string };
  hooks: HookCommandSettings;
  permissionSources: (PermissionRuleLists & { source: PermissionRuleSource })[];
  defaultMode?: PermissionMode;
  additionalDirectories: string[];
  mcpServers: Record<string, McpServerConfig>;
  /** Plugin modules to load (absolute paths), in order. */
  plugins: string[];
}

/**
 * The config key of each layer switch. The ladder's options name layers this way today; a layer missing here
 * cannot be switched from settings (the error lists the ones that can).
 */
const LAYER_SWITCHES: Readonly<Record<string, keyof ContextManagerConfig>> = {
  "tool-result-budget": "toolResultBudget",
  snip: "snip",
  microcompact: "microcompact",
  "observation-masking": "observationMasking",
  collapse: "collapse",
  "session-memory": "sessionMemoryCompact",
};

/**
 * Merges the loaded files, lowest precedence first. The user's files and `--settings` always apply. The
 * project's files apply in full only when `trusted`; otherwise only what runs nothing and widens nothing
 * (model, provider, compaction, memory, deny and ask rules) is taken from them.
 */
export function resolveAgentConfig(
  loaded: LoadedSettings,
  options: { trusted: boolean; project: ProjectRunnables },
): AgentConfig {
  const config: AgentConfig = {
    models: {},
    compaction: {},
    pauseAfterCompaction: false,
    memory: {},
    history: true,
    hooks: {},
    permissionSources: [],
    additionalDirectories: [],
    mcpServers: {},
    plugins: [],
  };
  for (const layer of loaded.layers) {
    const full = options.trusted || (layer.scope !== "project" && layer.scope !== "local");
    const settings = layer.settings;
    if (settings.model !== undefined) config.model = settings.model;
    if (settings.provider !== undefined) config.provider = settings.provider;
    if (settings.contextWindow !== undefined)
      config.contextWindow = windowSetting(settings.contextWindow, layer.file);
    for (const [model, limits] of Object.entries(settings.models ?? {}))
      config.models[model] = { ...config.models[model], ...limits };
    if (settings.memory) config.memory = { ...config.memory, ...settings.memory };
    if (settings.history !== undefined) config.history = settings.history;
    if (settings.summarizer !== undefined) config.summarizer = settings.summarizer;
    if (settings.compaction) mergeCompaction(config.compaction, settings.compaction, layer.file);
    if (settings.compaction?.pauseAfterAuto !== undefined)
      config.pauseAfterCompaction = settings.compaction.pauseAfterAuto;
    const permissions = settings.permissions ?? {};
    const lists: PermissionRuleLists = {};
    if (permissions.deny) lists.deny = permissions.deny;
    if (permissions.ask) lists.ask = permissions.ask;
    if (full && permissions.allow) lists.allow = permissions.allow;
    if (Object.keys(lists).length > 0) config.permissionSources.push({ ...lists, source: sourceOf(layer) });
    if (!full) continue;
    if (permissions.defaultMode) config.defaultMode = permissions.defaultMode;
    config.additionalDirectories.push(
      ...(permissions.additionalDirectories ?? []).map((dir) => resolvePath(dir, layer.root)),
    );
    for (const [event, groups] of Object.entries(layer.hooks))
      config.hooks[event] = [...(config.hooks[event] ?? []), ...groups];
    Object.assign(config.mcpServers, layer.mcpServers);
    config.plugins.push(...layer.plugins);
  }
  if (options.trusted) {
    // `.mcp.json` first: a settings file's server of the same name wins, as the later file does.
    config.mcpServers = { ...options.project.mcpJson, ...config.mcpServers };
    config.plugins.push(...options.project.pluginDir);
  }
  config.plugins = [...new Set(config.plugins)];
  return config;
}

/** `contextWindow` in tokens: a number as it is, a string ("200K") as `--window` reads it. */
function windowSetting(value: number | string, file: string): number {
  if (typeof value === "number") return value;
  try {
    return parseWindow(value);
  } catch (error) {
    throw new SettingsError(
      `${file}: contextWindow ${JSON.stringify(value)} ${(error as Error).message.replace(/^--window \S+ /, "")}`,
      { file, key: "contextWindow", cause: error },
    );
  }
}

function mergeCompaction(
  target: ContextManagerConfig,
  compaction: NonNullable<AgentSettings["compaction"]>,
  file: string,
): void {
  if (compaction.threshold) target.threshold = compaction.threshold;
  if (compaction.thresholds) target.thresholds = { ...target.thresholds, ...compaction.thresholds };
  if (compaction.proactive) target.proactive = compaction.proactive;
  if (compaction.emergency) target.emergency = compaction.emergency;
  for (const [layer, on] of Object.entries(compaction.layers ?? {})) {
    const key = LAYER_SWITCHES[layer];
    if (key === undefined) {
      throw new SettingsError(
        `${file}: compaction.layers.${layer} is not a layer that can be switched; use ${Object.keys(LAYER_SWITCHES).join(", ")} (proactive: "off" stops the whole ladder).`,
        { file, key: `compaction.layers.${layer}` },
      );
    }
    (target as Record<string, unknown>)[key] = on ? {} : false;
  }
}
