// Fails on a cycle in the workspace's package graph, and on code that names a workspace package its manifest
// does not declare. An edge is any of dependencies, devDependencies, peerDependencies and
// optionalDependencies: pnpm orders `pnpm -r build` by all of them, so a cycle through a peer or a dev
// dependency breaks a fresh clone's build even when turbo (which ignores peers) gets by. Code that reaches a
// package through a string the manifest does not list (a dynamic import of a variable specifier) hides an edge
// from both, so every quoted specifier of a workspace package in a package's src/ and bench/ must be declared.
// Run from the repository root (`pnpm run check` does): `node .ci/check-package-graph.mjs`. Prints one line.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..");
const KINDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];

/** The workspace's package folders, from the globs of pnpm-workspace.yaml (`dir/*` and plain folders). */
function workspaceFolders() {
  const yaml = readFileSync(join(ROOT, "pnpm-workspace.yaml"), "utf8");
  const block = /^packages:\n((?:[ \t]+-.*\n?)+)/m.exec(yaml)?.[1] ?? "";
  const globs = [...block.matchAll(/-\s*["']?([^"'\n]+?)["']?\s*$/gm)].map((match) => match[1]);
  return globs.flatMap((glob) => {
    if (!glob.endsWith("/*")) return [glob];
    const parent = glob.slice(0, -2);
    if (!existsSync(join(ROOT, parent))) return [];
    return readdirSync(join(ROOT, parent)).map((name) => `${parent}/${name}`);
  });
}

/** Every `.ts`/`.tsx`/`.mts`/`.js`/`.mjs` file under `folder`, without node_modules and build output. */
function sourceFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) return [];
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|cts|js|mjs|cjs)$/.test(name) ? [path] : [];
  });
}

const packages = new Map();
for (const folder of workspaceFolders()) {
  const manifestPath = join(ROOT, folder, "package.json");
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  if (typeof manifest.name === "string") packages.set(manifest.name, { folder, manifest });
}

const problems = [];
const edges = new Map();
for (const [name, { folder, manifest }] of packages) {
  const declared = new Map();
  for (const kind of KINDS) {
    for (const dependency of Object.keys(manifest[kind] ?? {})) {
      if (packages.has(dependency) && dependency !== name && !declared.has(dependency)) {
        declared.set(dependency, kind);
      }
    }
  }
  edges.set(name, declared);
  // A quoted specifier of a workspace package (or its subpath) in the package's own code.
  for (const file of ["src", "bench"].flatMap((sub) => sourceFiles(join(ROOT, folder, sub)))) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/["'](@[\w.-]+\/[\w.-]+)(?:\/[\w./-]*)?["']/g)) {
      const named = match[1];
      if (named !== name && packages.has(named) && !declared.has(named)) {
        problems.push(
          `${relative(ROOT, file)} names ${named}, which ${name}'s package.json does not declare: declare it (and keep the graph acyclic) or take what it offers as a parameter.`,
        );
      }
    }
  }
}

// Cycles: Tarjan's strongly connected components; every component of more than one package is a cycle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function connect(name) {
  index.set(name, counter);
  low.set(name, counter);
  counter++;
  stack.push(name);
  onStack.add(name);
  for (const next of edges.get(name).keys()) {
    if (!index.has(next)) {
      connect(next);
      low.set(name, Math.min(low.get(name), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(name, Math.min(low.get(name), index.get(next)));
    }
  }
  if (low.get(name) === index.get(name)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== name);
    if (component.length > 1) components.push(component);
  }
}
for (const name of [...packages.keys()].sort()) if (!index.has(name)) connect(name);

for (const component of components) {
  const members = new Set(component);
  const arrows = component
    .sort()
    .flatMap((from) =>
      [...edges.get(from)].filter(([to]) => members.has(to)).map(([to, kind]) => `${from} → ${to} (${kind})`),
    );
  problems.push(
    `The workspace packages ${component.sort().join(", ")} depend on each other: ${arrows.join("; ")}. A cycle is a design error (docs/decisions/0026): the package that wants to offer the other's store takes it as a parameter and names it nowhere.`,
  );
}

if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
const edgeCount = [...edges.values()].reduce((sum, declared) => sum + declared.size, 0);
process.stdout.write(
  `package graph: ${packages.size} workspace packages, ${edgeCount} edges (dependencies, dev, peer, optional), no cycle; every named workspace package is declared\n`,
);
