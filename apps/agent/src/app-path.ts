import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * A file of the app's own folder (`package.json`, `assets/…`, `dist/demo/…`), found the same way from the
 * compiled modules in `dist/` and from the bundle in `dist/bundle/`: the nearest folder with a package.json.
 */
export function appPath(...segments: string[]): string {
  if (root === undefined) {
    let folder = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(folder, "package.json")) && dirname(folder) !== folder) folder = dirname(folder);
    root = folder;
  }
  return join(root, ...segments);
}
