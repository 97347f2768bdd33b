// The workspace as pnpm sees it, for the .ci checks: the package folders that the `packages` globs of
// pnpm-workspace.yaml (parsed with the `yaml` library, never by pattern) name, and each one's manifest.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

/**
 * The folders (relative to `root`, `/`-separated) the workspace globs name: a plain folder, `dir/*` (its
 * sub-folders) or `dir/**` (every folder below it); `!glob` removes what it names. Any other glob throws, so that
 * a new form of glob is read on purpose rather than missed.
 */
export function workspaceFolders(root) {
  const config = parse(readFileSync(join(root, "pnpm-workspace.yaml"), "utf8")) ?? {};
  const globs = config.packages ?? [];
  if (!Array.isArray(globs) || globs.some((glob) => typeof glob !== "string")) {
    throw new Error("pnpm-workspace.yaml: `packages` must be a list of folder globs");
  }
  const below = (folder, deep) => {
    if (!existsSync(join(root, folder))) return [];
    return readdirSync(join(root, folder))
      .filter((name) => name !== "node_modules" && !name.startsWith("."))
      .map((name) => `${folder}/${name}`)
      .filter((path) => statSync(join(root, path)).isDirectory())
      .flatMap((path) => (deep ? [path, ...below(path, true)] : [path]));
  };
  const expand = (glob) => {
    const clean = glob.replace(/^\.\//, "").replace(/\/$/, "");
    if (clean.endsWith("/**")) return below(clean.slice(0, -3), true);
    if (clean.endsWith("/*")) return below(clean.slice(0, -2), false);
    if (/[*?[\]{}]/.test(clean)) {
      throw new Error(
        `pnpm-workspace.yaml: the glob "${glob}" is not read by .ci/workspace.mjs; add its form`,
      );
    }
    return [clean];
  };
  const included = new Set(globs.filter((glob) => !glob.startsWith("!")).flatMap(expand));
  for (const glob of globs.filter((glob) => glob.startsWith("!"))) {
    for (const folder of expand(glob.slice(1))) included.delete(folder);
  }
  return [...included].sort();
}

/** Every workspace package (a folder with a package.json that has a name): its folder and manifest. */
export function workspacePackages(root) {
  return workspaceFolders(root)
    .filter((folder) => existsSync(join(root, folder, "package.json")))
    .map((folder) => ({
      folder,
      manifest: JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8")),
    }))
    .filter(({ manifest }) => typeof manifest.name === "string");
}

/** The version the pnpm catalog of pnpm-workspace.yaml pins for `name`. */
export function catalogVersion(root, name) {
  const config = parse(readFileSync(join(root, "pnpm-workspace.yaml"), "utf8")) ?? {};
  const version = config.catalog?.[name];
  if (typeof version !== "string")
    throw new Error(`${name} is not in the pnpm catalog of pnpm-workspace.yaml`);
  return version;
}
