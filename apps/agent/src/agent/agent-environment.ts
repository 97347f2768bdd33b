import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { ConfigurationError, type ModelProvider, type Usage } from "@unforget/core";
import type { HookPlugin } from "@unforget/hooks";
import type { McpServerConfig } from "@unforget/mcp";
import { defaultMemoryRoot } from "@unforget/memory/root";
import { createProviderFromEnv, type ProviderSettingsByName } from "@unforget/providers";
import {
  type AgentSession,
  type CanUseTool,
  createAgentSession,
  listSessions,
  type PermissionMode,
} from "@unforget/session";
import type { TaskManager } from "@unforget/tasks";
import { createBuiltinTools } from "@unforget/tools";
import { type AgentConfig, resolveAgentConfig } from "./agent-config.ts";
import { AgentUsageError, NoProviderError, SettingsError } from "./agent-errors.ts";
import { connectMcpOnUse, readMcpFlag } from "./mcp-flags.ts";
import { modelNameProblem, unknownModelNotice, withContextWindow } from "./model-names.ts";
import { loadPluginFiles } from "./plugin-loader.ts";
import { createLazyTaskManager } from "./project-data/lazy-task-manager.ts";
import { type ProjectMemory, projectMemoryOnUse, sessionNeedsMemory } from "./project-data/project-memory.ts";
import {
  describeRunnables,
  newSinceTrusted,
  type ProjectRunnables,
  projectRunnables,
  rememberTrust,
  type TrustState,
  trustState,
} from "./project-trust.ts";
import { type LoadedSettings, loadSettings, unforgetHome } from "./settings/settings.ts";
import { buildSystemPrompt, type InstructionsFile, readInstructions } from "./system-prompt.ts";
import { createUsageMeter } from "./usage-meter.ts";

/** The agent's command-line flags (Claude Code's names). */
export interface AgentFlags {
  model?: string;
  provider?: string;
  /** `--summarizer-model`: the model that writes summaries and session notes (on the session's provider). */
  summarizerModel?: string;
  resume?: string;
  continue?: boolean;
  permissionMode?: PermissionMode;
  allowedTools?: string[];
  disallowedTools?: string[];
  addDir?: string[];
  mcpConfig?: string[];
  settings?: string[];
  verbose?: boolean;
  maxTurns?: number;
  trustProject?: boolean;
  /** `--mcp-nonblocking`: the first request does not wait for MCP servers; their tools join once connected. */
  mcpNonblocking?: boolean;
}

/** How the app asks whether to trust the folder; `-p` passes none (it never asks). */
export type AskTrust = (question: {
  state: Exclude<TrustState, "trusted" | "nothing-to-trust">;
  items: string[];
  /** Of `items`, those that are new since the folder was trusted (none when that is not known). */
  added: string[];
}) => Promise<boolean>;

export interface AgentEnvironmentOptions {
  flags: AgentFlags;
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Asked once when the project's files would run something and the folder is not trusted with them. */
  askTrust?: AskTrust;
  /** Asked about each tool call the rules leave open (the REPL's prompt); none in `-p`. */
  canUseTool?: CanUseTool;
  /**
   * Told each thing the user should know as it happens (a model unforget does not know, once the session asks
   * about it); without it, what comes while the environment is created goes to `notices`.
   */
  onNotice?: (text: string) => void;
  /**
   * True for the REPL. Memory extraction (a model call at the end of a session) then defaults to "propose";
   * a `-p` run extracts nothing unless the settings set `memory.consent`.
   */
  interactive?: boolean;
}

/** Everything a run of the agent shares between its sessions (a `/resume` or `/clear` opens another). */
export interface AgentEnvironment {
  projectDir: string;
  sessionsDir: string;
  provider: ModelProvider;
  providerName: string;
  /** Why this provider was chosen ("ANTHROPIC_API_KEY is set"). */
  providerReason: string;
  /** Where requests go, when that is not the provider's own service (`ANTHROPIC_BASE_URL`, …). */
  providerEndpoint: string | undefined;
  model: string;
  /** The model (and provider, when another) that writes summaries and session notes, when not the session's. */
  summarizer: { model: string; provider?: ModelProvider } | undefined;
  /** The usage of every model call of this run so far, by model: the turns', summaries', notes' and memory's. */
  usageByModel(): ReadonlyMap<string, Usage>;
  config: AgentConfig;
  trust: TrustState;
  trusted: boolean;
  instructions: InstructionsFile[];
  plugins: HookPlugin[];
  /** The project's background tasks: `@unforget/tasks` loads with the first task used (or found from earlier runs). */
  tasks: TaskManager;
  /** The project's memory, opened (and `@unforget/memory` loaded) on the first call. */
  memory(): Promise<ProjectMemory>;
  mcpServers: Record<string, McpServerConfig>;
  /** The plugins that loaded: their names, and their files (relative to the project when inside it). */
  pluginFiles: { name: string; path: string }[];
  /** Things the user should know: skipped project files, plugins that failed, problems in Claude Code's files. */
  notices: string[];
  /** Opens a session: a new one, or `resume` of one in `sessionsDir`. */
  openSession(options?: { resume?: string }): Promise<AgentSession>;
  /** The id `--resume` / `--continue` asks for, checked to exist; undefined for a new session. */
  resumeId: string | undefined;
  close(): Promise<void>;
}

const NO_PROVIDER_TAIL =
  "To try Unforget without a provider, `unforget replay` replays a recorded session through the compaction ladder, offline.";

/** Reads settings, settles trust, finds the provider, loads plugins: what every session of this run uses. */
export async function createAgentEnvironment(options: AgentEnvironmentOptions): Promise<AgentEnvironment> {
  const { flags } = options;
  const env = options.env;
  const projectDir = resolve(options.cwd ?? process.cwd());
  const homeDir = resolve(env.HOME || homedir());
  const loaded = await loadSettings({
    projectDir,
    homeDir,
    ...(flags.settings ? { extra: flags.settings } : {}),
    env,
  });
  const notices = [...loaded.warnings];
  const notify = (text: string) => (options.onNotice ? options.onNotice(text) : notices.push(text));
  const project = await projectRunnables(projectDir, loaded, env);
  // What runs nothing (provider, model, window, limits) is read whether or not the folder is trusted: a setup that
  // cannot work (no provider, a mistyped model, a bad command line) is said before the trust question is asked.
  const untrusted = resolveAgentConfig(loaded, { trusted: false, project });
  const chosen = await chooseProvider(env, flags.provider ?? untrusted.provider, {
    ...(Object.keys(untrusted.models).length > 0 ? { modelLimits: untrusted.models } : {}),
    onUnknownModel: (name, assumed) => notify(unknownModelNotice(name, assumed)),
  });
  const model = flags.model ?? untrusted.model ?? chosen.model;
  checkModel(model, flags, untrusted, loaded);
  // Every call goes through the meter, so that `-p` prices the summariser's calls as well as the turn's.
  const meter = createUsageMeter();
  const summarizer = await summarizerFor(flags, untrusted, chosen.providerName, async (name) => {
    const limits = Object.keys(untrusted.models).length > 0 ? { modelLimits: untrusted.models } : {};
    return meter.wrap((await chooseProvider(env, name, limits)).provider);
  });
  const mcpFlagServers: Record<string, McpServerConfig> = {};
  for (const file of flags.mcpConfig ?? []) Object.assign(mcpFlagServers, await readMcpFlag(file, env));
  const dataDir = dirname(defaultMemoryRoot(projectDir, { configHome: unforgetHome(homeDir) }));
  const sessionsDir = join(dataDir, "sessions");
  const resumeId = await resumeTarget(flags, sessionsDir);

  const { state, trusted } = await decideTrust(options, loaded, projectDir, project, notices);
  const config = trusted ? resolveAgentConfig(loaded, { trusted, project }) : untrusted;
  const provider = meter.wrap(withContextWindow(chosen.provider, config.contextWindow));

  const { loadedPlugins, pluginFiles } = await loadPlugins(config, projectDir, notices);

  const mcpServers = { ...config.mcpServers, ...mcpFlagServers };

  const instructions = await readInstructions(projectDir, homeDir);
  const additionalDirectories = [
    ...config.additionalDirectories,
    ...(flags.addDir ?? []).map((dir) => resolve(projectDir, dir)),
  ];
  const tasks = createLazyTaskManager({ dir: join(dataDir, "tasks"), connectMcp: connectMcpOnUse });
  const memoryRoot = join(dataDir, "memory");
  const memory = projectMemoryOnUse(memoryRoot);
  const system = systemPromptFor(projectDir, additionalDirectories, instructions);

  const environment: AgentEnvironment = {
    projectDir,
    sessionsDir,
    provider,
    providerName: chosen.providerName,
    providerReason: chosen.reason,
    providerEndpoint: chosen.endpoint,
    model,
    summarizer,
    usageByModel: meter.byModel,
    config,
    trust: state,
    trusted,
    instructions,
    plugins: loadedPlugins.plugins,
    pluginFiles,
    tasks,
    memory,
    mcpServers,
    notices,
    resumeId,
    openSession: (open = {}) =>
      openAgentSession(
        {
          options,
          provider,
          model,
          summarizer,
          system,
          additionalDirectories,
          tasks,
          sessionsDir,
          projectDir,
          homeDir,
          plugins: loadedPlugins.plugins,
          config,
          memory,
          memoryRoot,
          mcpServers,
        },
        open,
      ),
    close: () => tasks.close(),
  };
  return environment;
}

/** Whether the project folder is trusted: asks (or says why not) when its runnable settings are new or changed. */
async function decideTrust(
  options: AgentEnvironmentOptions,
  loaded: LoadedSettings,
  projectDir: string,
  project: Awaited<ReturnType<typeof projectRunnables>>,
  notices: string[],
) {
  const state = trustState(loaded, projectDir, project);
  const trusted = await settleTrust(
    state,
    project,
    {
      ...options,
      userFile: loaded.userFile,
      projectDir,
      added: state === "changed" ? (newSinceTrusted(loaded, projectDir, project) ?? []) : [],
    },
    notices,
  );
  return { state, trusted };
}

/** The system prompt for the project folder, with today's date, the platform and the instruction files. */
function systemPromptFor(
  projectDir: string,
  additionalDirectories: string[],
  instructions: Parameters<typeof buildSystemPrompt>[1],
): ReturnType<typeof buildSystemPrompt> {
  return buildSystemPrompt(
    {
      cwd: projectDir,
      platform: `${process.platform} (${process.arch})`,
      date: new Date().toISOString().slice(0, 10),
      additionalDirectories,
    },
    instructions,
  );
}

/** Loads the configured plugin files; each one that fails becomes a notice, and the agent goes on without it. */
async function loadPlugins(config: AgentConfig, projectDir: string, notices: string[]) {
  const loadedPlugins = await loadPluginFiles(config.plugins);
  const pluginFiles = loadedPlugins.files.map((file) => ({
    ...file,
    path: relativeTo(projectDir, file.path),
  }));
  for (const failure of loadedPlugins.failures)
    notices.push(`Plugin ${failure.path} failed to load (${failure.message}); unforget goes on without it.`);
  return { loadedPlugins, pluginFiles };
}

/** What every session an environment opens shares, settled once by `createAgentEnvironment`. */
interface SessionParts {
  options: AgentEnvironmentOptions;
  provider: ModelProvider;
  model: AgentEnvironment["model"];
  summarizer: AgentEnvironment["summarizer"];
  system: ReturnType<typeof buildSystemPrompt>;
  additionalDirectories: string[];
  tasks: TaskManager;
  sessionsDir: string;
  projectDir: string;
  homeDir: string;
  plugins: AgentEnvironment["plugins"];
  config: AgentConfig;
  memory: AgentEnvironment["memory"];
  memoryRoot: string;
  mcpServers: Record<string, McpServerConfig>;
}

/** Opens a new session (or resumes one) with the environment's provider, tools, hooks, memory and permissions. */
async function openAgentSession(parts: SessionParts, open: { resume?: string }): Promise<AgentSession> {
  const { options, config, tasks, additionalDirectories, mcpServers } = parts;
  const { flags } = options;
  const mode = flags.permissionMode ?? config.defaultMode;
  const consent = config.memory.consent ?? (options.interactive ? "propose" : "off");
  const withMemory = await sessionNeedsMemory(parts.memoryRoot, {
    interactive: options.interactive === true,
    consent,
    sessionNotes: config.memory.sessionNotes === true,
  });
  return createAgentSession({
    provider: parts.provider,
    model: parts.model,
    ...(parts.summarizer ? { summarizer: parts.summarizer } : {}),
    system: parts.system,
    tools: createBuiltinTools({ additionalDirectories, bash: { tasks } }),
    sessionsDir: parts.sessionsDir,
    cwd: parts.projectDir,
    ...(open.resume ? { resume: open.resume } : {}),
    hooks: {
      plugins: parts.plugins,
      ...(Object.keys(config.hooks).length > 0 ? { commands: config.hooks } : {}),
    },
    context: { config: config.compaction },
    ...(withMemory ? { memory: await sessionMemory(parts, consent) } : {}),
    tasks,
    history: config.history,
    permissions: {
      ...(mode ? { mode } : {}),
      sources: config.permissionSources,
      rules: {
        ...(flags.allowedTools?.length ? { allow: flags.allowedTools } : {}),
        ...(flags.disallowedTools?.length ? { deny: flags.disallowedTools } : {}),
      },
      additionalDirectories,
      homeDir: parts.homeDir,
    },
    ...(options.canUseTool ? { canUseTool: options.canUseTool } : {}),
    ...(Object.keys(mcpServers).length > 0 ? { mcpServers } : {}),
    ...(flags.mcpNonblocking ? { waitForMcpServers: false } : {}),
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    // A pause is for someone at the prompt: `-p` carries on.
    ...(config.pauseAfterCompaction && options.interactive ? { pauseAfterCompaction: true } : {}),
  });
}

/** The session's memory option: the project's memory with the settings' consent, recall and session notes. */
async function sessionMemory(
  parts: SessionParts,
  consent: "propose" | "auto" | "off",
): Promise<NonNullable<Parameters<typeof createAgentSession>[0]["memory"]>> {
  const { config } = parts;
  const { store, proposals } = await parts.memory();
  return {
    store,
    proposals,
    consent,
    ...(config.memory.recall ? { recall: config.memory.recall } : {}),
    ...(config.memory.sessionNotes !== undefined ? { sessionNotes: config.memory.sessionNotes } : {}),
  };
}

/** A path inside the project as the user reads it (`.unforget/plugins/x.js`); any other as it is. */
function relativeTo(projectDir: string, path: string): string {
  const inside = relative(projectDir, path);
  return inside.startsWith("..") || isAbsolute(inside) ? path : inside;
}

async function settleTrust(
  state: TrustState,
  project: ProjectRunnables,
  options: AgentEnvironmentOptions & { userFile: string; projectDir: string; added: string[] },
  notices: string[],
): Promise<boolean> {
  if (state === "trusted") return true;
  if (state === "nothing-to-trust") return false;
  const items = describeRunnables(project);
  if (options.flags.trustProject) return true;
  if (options.askTrust) {
    const yes = await options.askTrust({ state, items, added: options.added });
    if (yes) {
      await rememberTrust(options.userFile, options.projectDir, project);
      return true;
    }
  }
  notices.push(
    [
      `This folder is not trusted${state === "changed" ? " with what its files list now (they changed since you trusted it)" : ""}, so its files' hooks, plugins, MCP servers and allow-rules were not loaded:`,
      ...items.map((item) => `  ${item}${options.added.includes(item) ? " (new)" : ""}`),
      options.askTrust
        ? "Run unforget again here to be asked again."
        : "Pass --trust-project to load them for this run, or run unforget here interactively to trust the folder.",
    ].join("\n"),
  );
  return false;
}

/** The model is checked before the session starts: a name close to a known one is taken for a typo. */
function checkModel(model: string, flags: AgentFlags, config: AgentConfig, loaded: LoadedSettings): void {
  const problem = modelNameProblem(model, config.models);
  if (problem === undefined) return;
  if (flags.model !== undefined) throw new AgentUsageError("--model", `--model ${problem}`);
  const layer = loaded.layers.findLast((candidate) => candidate.settings.model === model);
  if (layer) throw new SettingsError(`${layer.file}: model ${problem}`, { file: layer.file, key: "model" });
  throw new ConfigurationError(`UNFORGET_MODEL: ${problem}`, { setting: "UNFORGET_MODEL" });
}

/**
 * The summariser model: `--summarizer-model` (on the session's provider), else the settings' `summarizer`, on its
 * own provider when it names another.
 */
async function summarizerFor(
  flags: AgentFlags,
  config: AgentConfig,
  sessionProvider: string,
  providerNamed: (name: string) => Promise<ModelProvider>,
): Promise<AgentEnvironment["summarizer"]> {
  if (flags.summarizerModel !== undefined) return { model: flags.summarizerModel };
  const setting = config.summarizer;
  if (setting === undefined) return undefined;
  if (setting.provider === undefined || setting.provider === sessionProvider) return { model: setting.model };
  return { model: setting.model, provider: await providerNamed(setting.provider) };
}

async function chooseProvider(
  env: Record<string, string | undefined>,
  provider: string | undefined,
  settings: Pick<ProviderSettingsByName["anthropic"], "modelLimits" | "onUnknownModel">,
) {
  const providerEnv = provider ? { ...env, UNFORGET_PROVIDER: provider } : env;
  try {
    return await createProviderFromEnv({
      env: providerEnv,
      anthropic: settings,
      bedrock: settings,
      vertex: settings,
    });
  } catch (error) {
    if (
      error instanceof ConfigurationError &&
      error.setting === "UNFORGET_PROVIDER" &&
      !providerEnv.UNFORGET_PROVIDER?.trim()
    ) {
      throw new NoProviderError(`${error.message}\n${NO_PROVIDER_TAIL}`, { cause: error });
    }
    throw error;
  }
}

async function resumeTarget(flags: AgentFlags, sessionsDir: string): Promise<string | undefined> {
  if (flags.resume === undefined && !flags.continue) return undefined;
  const sessions = await listSessions(sessionsDir);
  if (flags.resume === undefined) {
    const newest = sessions[0];
    if (newest === undefined)
      throw new AgentUsageError(
        "--continue",
        "--continue: there is no earlier session in this folder to continue.",
      );
    return newest.sessionId;
  }
  const match = sessions.filter(
    (session) => session.sessionId === flags.resume || session.sessionId.startsWith(flags.resume as string),
  );
  if (match.length === 1) return match[0]?.sessionId;
  const recent = sessions
    .slice(0, 5)
    .map((session) => `  ${session.sessionId}  ${session.firstPrompt ?? ""}`.trimEnd());
  throw new AgentUsageError(
    "--resume",
    match.length > 1
      ? `--resume ${flags.resume} matches ${match.length} sessions; give more of the id.`
      : [
          `--resume ${flags.resume}: there is no such session in this folder.`,
          ...(recent.length > 0
            ? ["The most recent ones:", ...recent]
            : ["This folder has no sessions yet."]),
        ].join("\n"),
  );
}
