import { createHash } from "node:crypto";
import { access, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import type { McpServerConfig } from "@unforget/mcp";
import { SettingsError } from "./agent-errors.ts";
import { mcpFileError } from "./json-text.ts";
import type { LoadedSettings, SettingsLayer } from "./settings/settings.ts";

/** File names a plugin in `.unforget/plugins/` may have. */
export const PLUGIN_EXTENSIONS = [".js", ".mjs", ".ts", ".mts"] as const;

/** What a project's own files would run or allow, were its folder trusted. */
export interface ProjectRunnables {
  hooks: string[];
  plugins: string[];
  mcpServers: string[];
  /** Allow rules, a default mode, extra folders: what widens what runs without asking. */
  permissions: string[];
  /** The project's `.mcp.json` servers (Claude Code's project scope). */
  mcpJson: Record<string, McpServerConfig>;
  /** The modules in `.unforget/plugins/` (absolute paths). */
  pluginDir: string[];
}

/** Where the folder stands: nothing to trust, trusted (as listed now), never trusted, or trusted before a change. */
export type TrustState = "nothing-to-trust" | "trusted" | "untrusted" | "changed";

const isProjectLayer = (layer: SettingsLayer) => layer.scope === "project" || layer.scope === "local";

/** Lists what the project's settings, `.mcp.json` and `.unforget/plugins/` would run. */
export async function projectRunnables(
  projectDir: string,
  loaded: LoadedSettings,
  env?: Record<string, string | undefined>,
): Promise<ProjectRunnables> {
  const layers = loaded.layers.filter(isProjectLayer);
  const runnables: ProjectRunnables = {
    hooks: [],
    plugins: [],
    mcpServers: [],
    permissions: [],
    mcpJson: await readProjectMcp(projectDir, env),
    pluginDir: await pluginDirectory(join(projectDir, ".unforget", "plugins")),
  };
  for (const layer of layers) {
    for (const [event, groups] of Object.entries(layer.hooks)) {
      for (const group of groups) {
        for (const hook of group.hooks) {
          runnables.hooks.push(`${event}${group.matcher ? ` (${group.matcher})` : ""}: ${hook.command}`);
        }
      }
    }
    runnables.plugins.push(...layer.plugins);
    for (const [name, server] of Object.entries(layer.mcpServers))
      runnables.mcpServers.push(describeServer(name, server));
    const permissions = layer.settings.permissions ?? {};
    runnables.permissions.push(...(permissions.allow ?? []).map((rule) => `allow ${rule}`));
    if (permissions.defaultMode) runnables.permissions.push(`default mode ${permissions.defaultMode}`);
    runnables.permissions.push(
      ...(permissions.additionalDirectories ?? []).map((dir) => `extra folder ${dir}`),
    );
  }
  runnables.plugins.push(...runnables.pluginDir);
  for (const [name, server] of Object.entries(runnables.mcpJson))
    runnables.mcpServers.push(describeServer(name, server));
  return runnables;
}

function describeServer(name: string, server: McpServerConfig): string {
  if ("url" in server) return `${name}: ${server.url}`;
  return `${name}: ${[server.command, ...(server.args ?? [])].join(" ")}`;
}

async function readProjectMcp(
  projectDir: string,
  env: Record<string, string | undefined> | undefined,
): Promise<Record<string, McpServerConfig>> {
  const file = join(projectDir, ".mcp.json");
  // Without the file MCP's code never loads (start-up stays without it).
  if (
    !(await access(file).then(
      () => true,
      (error: NodeJS.ErrnoException) => error.code !== "ENOENT",
    ))
  )
    return {};
  try {
    const { readMcpConfig } = await import("@unforget/mcp");
    return await readMcpConfig(file, env ? { env } : {});
  } catch (error) {
    throw await mcpFileError(file, error);
  }
}

/** The plugin modules of a `plugins/` folder, by name; none when it does not exist. */
export async function pluginDirectory(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  return names
    .filter(
      (name) => PLUGIN_EXTENSIONS.some((extension) => name.endsWith(extension)) && !name.endsWith(".d.ts"),
    )
    .sort()
    .map((name) => join(folder, name));
}

/** True when the project's files would run or allow nothing. */
export function isEmpty(runnables: ProjectRunnables): boolean {
  return (
    runnables.hooks.length +
      runnables.plugins.length +
      runnables.mcpServers.length +
      runnables.permissions.length ===
    0
  );
}

/** A hash of what the project would run: a trusted folder whose list changes is asked about again. */
export function fingerprint(runnables: ProjectRunnables): string {
  const list = {
    hooks: [...runnables.hooks].sort(),
    plugins: [...runnables.plugins].sort(),
    mcpServers: [...runnables.mcpServers].sort(),
    permissions: [...runnables.permissions].sort(),
  };
  return createHash("sha256").update(JSON.stringify(list)).digest("hex");
}

/** Whether the folder is trusted with what it lists now, as remembered in the user's settings. */
export function trustState(
  loaded: LoadedSettings,
  projectDir: string,
  runnables: ProjectRunnables,
): TrustState {
  if (isEmpty(runnables)) return "nothing-to-trust";
  const user = loaded.layers.find((layer) => layer.file === loaded.userFile);
  const remembered = user?.settings.trustedProjects?.[projectDir];
  if (remembered === undefined) return "untrusted";
  return remembered.fingerprint === fingerprint(runnables) ? "trusted" : "changed";
}

/**
 * What the list names now that it did not when the folder was trusted; undefined when the trust was remembered
 * without its list (by an earlier version) or there is none.
 */
export function newSinceTrusted(
  loaded: LoadedSettings,
  projectDir: string,
  runnables: ProjectRunnables,
): string[] | undefined {
  const user = loaded.layers.find((layer) => layer.file === loaded.userFile);
  const before = user?.settings.trustedProjects?.[projectDir]?.items;
  if (before === undefined) return undefined;
  const known = new Set(before);
  return describeRunnables(runnables).filter((item) => !known.has(item));
}

/** Remembers in `~/.unforget/settings.json` that the folder is trusted with what it lists now. */
export async function rememberTrust(
  userFile: string,
  projectDir: string,
  runnables: ProjectRunnables,
  now = new Date(),
): Promise<void> {
  let settings: Record<string, unknown> = {};
  try {
    settings = JSON.parse(await readFile(userFile, "utf8")) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new SettingsError(
        `${userFile} could not be read to remember the trusted folder (${(error as Error).message}).`,
        { file: userFile, key: "trustedProjects", cause: error },
      );
    }
  }
  const trusted = (settings.trustedProjects ?? {}) as Record<string, unknown>;
  trusted[projectDir] = {
    fingerprint: fingerprint(runnables),
    trustedAt: now.toISOString(),
    // The list itself, so that when it changes the question can mark what is new.
    items: describeRunnables(runnables),
  };
  settings.trustedProjects = trusted;
  await writeFileAtomic(userFile, `${JSON.stringify(settings, null, 2)}\n`);
}

/** The lines a trust prompt (or `-p`'s notice) shows: what the project's files would run. */
export function describeRunnables(runnables: ProjectRunnables): string[] {
  return [
    ...runnables.hooks.map((hook) => `hook ${hook}`),
    ...runnables.plugins.map((plugin) => `plugin ${plugin}`),
    ...runnables.mcpServers.map((server) => `MCP server ${server}`),
    ...runnables.permissions,
  ];
}
