import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { UnforgetError } from "@unforget/core";
import { applyPlugins, createSessionHooks, type HookPlugin } from "@unforget/hooks";
import { PluginLoaderMissingError } from "./agent-errors.ts";

/** A plugin file that could not be used; the agent goes on without it. */
export interface PluginFailure {
  path: string;
  message: string;
  /** The error's `code` when it is an `UnforgetError` (`plugin_loader_missing`: tsx is not installed). */
  code?: string;
}

/** The plugins that loaded, and those that did not. */
export interface LoadedPlugins {
  plugins: HookPlugin[];
  /** Where each loaded plugin came from, in the order of `plugins`. */
  files: { name: string; path: string }[];
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

/** How long the syntax check of a plugin that failed to parse may take (a second Node reads one file). */
const SYNTAX_CHECK_TIMEOUT_MS = 10_000;

/**
 * Why a plugin failed, with the line and column of a syntax error. Node's `import()` reports a syntax error without
 * them (it prints them only for an uncaught one), so the file is checked again by `node --check` as a module,
 * which does; tsx's errors carry them as `file:line:column: ERROR: …`.
 */
function describeFailure(error: unknown, path: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const compiled = /^Transform failed with \d+ errors?:\n.*?:(\d+):(\d+): ERROR: (.*)$/m.exec(message);
  if (compiled) return `line ${compiled[1]}, column ${compiled[2]}: ${compiled[3]}`;
  if (!(error instanceof SyntaxError) || /\.m?ts$/.test(path)) return message;
  let input: Buffer;
  try {
    input = readFileSync(path);
  } catch {
    return message;
  }
  // child_process loads with the first plugin checked, not with every start (start-up).
  const check = process
    .getBuiltinModule("node:child_process")
    .spawnSync(process.execPath, ["--input-type=module", "--check"], {
      input,
      encoding: "utf8",
      timeout: SYNTAX_CHECK_TIMEOUT_MS,
    });
  // `[stdin]:LINE`, the line's text, then a caret under the column.
  const [where, , caret] = (check.stderr ?? "").split("\n");
  const line = /^\[stdin\]:(\d+)$/.exec(where ?? "")?.[1];
  const column = caret?.indexOf("^") ?? -1;
  if (line === undefined) return message;
  return `line ${line}${column >= 0 ? `, column ${column + 1}` : ""}: ${message}`;
}

/** What compiles a TypeScript plugin: tsx's `tsImport`. */
type TypeScriptImport = (specifier: string, parentURL: string) => Promise<unknown>;

/** How the loader of TypeScript plugins is imported: tsx, an optional peer, loaded the first time one is met. */
type ImportTypeScriptLoader = () => Promise<{ tsImport: TypeScriptImport }>;

const importTsx: ImportTypeScriptLoader = () => import("tsx/esm/api");

/**
 * The TypeScript loader, or a `PluginLoaderMissingError` for `path` when it is not installed. Only the loader's
 * own import is looked at (a plugin that imports a missing package fails with its own error).
 */
async function typeScriptImport(
  path: string,
  importLoader: ImportTypeScriptLoader,
): Promise<TypeScriptImport> {
  try {
    return (await importLoader()).tsImport;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new PluginLoaderMissingError(path, { cause: error });
    throw error;
  }
}

/** Imports a JS module, or a TypeScript one through the TypeScript loader (imported only then). */
async function importModule(
  path: string,
  importLoader: ImportTypeScriptLoader,
): Promise<Record<string, unknown>> {
  if (/\.m?ts$/.test(path)) {
    const tsImport = await typeScriptImport(path, importLoader);
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
export async function loadPluginFiles(
  paths: readonly string[],
  options: { importTypeScriptLoader?: ImportTypeScriptLoader } = {},
): Promise<LoadedPlugins> {
  const importLoader = options.importTypeScriptLoader ?? importTsx;
  const loaded: LoadedPlugins = { plugins: [], files: [], failures: [] };
  const names = new Set<string>();
  for (const path of paths) {
    try {
      const module = await importModule(path, importLoader);
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
      loaded.files.push({ name: plugin.name, path });
    } catch (error) {
      const failure: PluginFailure = { path, message: describeFailure(error, path) };
      if (error instanceof UnforgetError) failure.code = error.code;
      loaded.failures.push(failure);
    }
  }
  return loaded;
}
