import { pathToFileURL } from "node:url";
import { applyPlugins, createSessionHooks, type HookPlugin } from "@unforget/hooks";

/** A plugin file that could not be used; the agent goes on without it. */
export interface PluginFailure {
  path: string;
  message: string;
}

/** The plugins that loaded, and those that did not. */
export interface LoadedPlugins {
  plugins: HookPlugin[];
  failures: PluginFailure[];
}

function isHookPlugin(value: unknown): value is HookPlugin {
  const candidate = value as Partial<HookPlugin> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.name === "string" &&
    candidate.name !== "" &&
    typeof candidate.apply === "function"
  );
}

/** Imports a JS module, or a TypeScript one through tsx (loaded only then). */
async function importModule(path: string): Promise<Record<string, unknown>> {
  if (/\.m?ts$/.test(path)) {
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
}

/**
 * Loads hook plugins from files, each default-exporting a `HookPlugin` (`{ name, apply(hooks) }`). Each is tried
 * on a scratch bus first, so a plugin whose module fails to import, that exports something else, that throws
 * from `apply` or that shares a name with an earlier one is reported with its path and left out; the others
 * load. Never throws.
 */
export async function loadPluginFiles(paths: readonly string[]): Promise<LoadedPlugins> {
  const loaded: LoadedPlugins = { plugins: [], failures: [] };
  const names = new Set<string>();
  for (const path of paths) {
    try {
      const module = await importModule(path);
      // A TypeScript file outside an ESM package is compiled as CommonJS: its default export is one level down.
      const nested = (module.default as { default?: unknown } | undefined)?.default;
      const plugin = isHookPlugin(module.default) ? module.default : nested;
      if (!isHookPlugin(plugin)) {
        throw new TypeError(
          'its default export is not a HookPlugin: export default { name: "my-plugin", apply(hooks) { … } }',
        );
      }
      if (names.has(plugin.name)) {
        throw new TypeError(
          `another plugin is already named "${plugin.name}"; give each plugin its own name`,
        );
      }
      applyPlugins(createSessionHooks(), [plugin]);
      names.add(plugin.name);
      loaded.plugins.push(plugin);
    } catch (error) {
      loaded.failures.push({ path, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return loaded;
}
