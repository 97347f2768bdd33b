// Packs every public (not private) workspace package once into a folder, as `pnpm publish` would ship it
// (workspace: and catalog: versions resolved), and writes `packed.json` there: each package's name, version,
// workspace folder and tarball. The checks that work on the packages as users get them
// (.ci/check-packed-types.mjs, .ci/check-footprint.mjs) read that folder with `--packed <folder>`, or pack into a
// scratch folder of their own without it. Run after the build:
// `node .ci/pack-packages.mjs [folder]` (default node_modules/.cache/unforget-packed, emptied first). Prints one line.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { workspacePackages } from "./workspace.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const INDEX = "packed.json";

/** The public workspace packages: folder and manifest. */
export function publicPackages(root = ROOT) {
  return workspacePackages(root).filter(({ manifest }) => manifest.private !== true);
}

/** Packs every public package into `destination` (emptied first); returns and writes the index. */
export function packPackages(destination, root = ROOT) {
  const packages = publicPackages(root);
  rmSync(destination, { recursive: true, force: true });
  mkdirSync(destination, { recursive: true });
  const filters = packages.flatMap(({ manifest }) => ["--filter", manifest.name]);
  try {
    execFileSync(
      "npx",
      ["-y", "pnpm@10.34.9", "-r", ...filters, "pack", "--pack-destination", resolve(destination)],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (error) {
    throw new Error(`pnpm pack failed in ${root}:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
  const packed = packages.map(({ folder, manifest }) => {
    const file = `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`;
    if (!existsSync(join(destination, file))) throw new Error(`pnpm pack did not write ${file}`);
    return { name: manifest.name, version: manifest.version, folder, tarball: file, manifest };
  });
  writeFileSync(join(destination, INDEX), `${JSON.stringify(packed, null, 2)}\n`);
  return withPaths(packed, destination);
}

/**
 * The packages packed into `folder` by `packPackages`, each with the absolute path of its tarball. Throws when
 * the folder's packages are not the workspace's public packages at their versions (a stale folder).
 */
export function readPacked(folder, root = ROOT) {
  const indexPath = join(folder, INDEX);
  if (!existsSync(indexPath)) throw new Error(`${folder} holds no ${INDEX}: pack with .ci/pack-packages.mjs`);
  const packed = JSON.parse(readFileSync(indexPath, "utf8"));
  const current = publicPackages(root).map(({ manifest }) => `${manifest.name}@${manifest.version}`);
  const found = packed.map(({ name, version }) => `${name}@${version}`);
  if (current.sort().join() !== found.sort().join()) {
    throw new Error(
      `${folder} does not hold the current public packages: pack again with .ci/pack-packages.mjs`,
    );
  }
  return withPaths(packed, folder);
}

const withPaths = (packed, folder) =>
  packed.map((entry) => ({ ...entry, path: resolve(folder, entry.tarball) }));

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const destination = resolve(process.argv[2] ?? join(ROOT, "node_modules", ".cache", "unforget-packed"));
  const started = Date.now();
  const packed = packPackages(destination);
  process.stdout.write(
    `packed ${packed.length} public packages into ${destination} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}
