// Fails on a cycle in the workspace's package graph, and on code that names a workspace package its manifest
// does not declare. An edge is any of dependencies, devDependencies, peerDependencies and
// optionalDependencies: pnpm orders `pnpm -r build` by all of them, so a cycle through a peer or a dev
// dependency breaks a fresh clone's build even when turbo (which ignores peers) gets by. Code that reaches a
// package through a string the manifest does not list hides an edge from both, so every specifier of a workspace
// package in a package's code must be declared: its string and template literals (comments do not count), read
// with TypeScript's parser in every folder of the package that holds code (src, bench, scripts, test, fixtures,
// bin; not node_modules, dist or hidden folders). A specifier the code builds (`\`@unforget/${name}\``,
// `"@unforget/" + name`) cannot be checked, so it fails too: name each package in full. The workspace's folders
// come from pnpm-workspace.yaml, parsed with the `yaml` library.
// Run from the repository root (`pnpm run check` does): `node .ci/check-package-graph.mjs [root]`. Prints one line.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { workspacePackages } from "./workspace.mjs";

const KINDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];
const SKIPPED = new Set(["node_modules", "dist", "coverage"]);
const CODE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** Every code file under `folder`, without node_modules, build output and hidden folders. */
function sourceFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    if (SKIPPED.has(name) || name.startsWith(".")) return [];
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return CODE.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const scriptKind = (file) =>
  /\.tsx$/.test(file)
    ? ts.ScriptKind.TSX
    : /\.(js|jsx|mjs|cjs)$/.test(file)
      ? ts.ScriptKind.JSX
      : ts.ScriptKind.TS;

/**
 * The package specifiers a file's code holds: every string or template literal that is a specifier of a package
 * in `scopes` (`@scope/name` or a subpath of it), and, as `built`, every literal that starts one but leaves its name
 * to an expression (a template's `${…}` or a `+`).
 */
function specifiersIn(root, file, scopes) {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
    scriptKind(file),
  );
  const named = [];
  const built = [];
  const scoped = (text) => {
    const match = /^(@[\w.-]+)\//.exec(text);
    return match !== null && scopes.has(match[1]);
  };
  const where = (node) =>
    `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const whole = /^(@[\w.-]+\/[\w.-]+)(?:\/[\w./-]*)?$/.exec(node.text);
      const joined =
        ts.isBinaryExpression(node.parent) &&
        node.parent.operatorToken.kind === ts.SyntaxKind.PlusToken &&
        node.parent.left === node;
      if (joined && scoped(node.text) && /^@[\w.-]+\/[\w.-]*$/.test(node.text)) {
        built.push({ text: node.text, where: where(node) });
      } else if (whole && scoped(node.text)) {
        named.push({ name: whole[1], where: where(node) });
      }
    } else if (ts.isTemplateExpression(node) && scoped(node.head.text)) {
      const whole = /^(@[\w.-]+\/[\w.-]+)\//.exec(node.head.text);
      if (whole) named.push({ name: whole[1], where: where(node) });
      else built.push({ text: `${node.head.text}\${…}`, where: where(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { named, built };
}

/** The check's findings for the workspace at `root` (sentences; empty when it holds) and its size. */
export function checkPackageGraph(root) {
  const packages = new Map();
  for (const { folder, manifest } of workspacePackages(root))
    packages.set(manifest.name, { folder, manifest });
  const scopes = new Set(
    [...packages.keys()]
      .filter((name) => name.startsWith("@"))
      .map((name) => name.slice(0, name.indexOf("/"))),
  );

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
    // A specifier of a workspace package (or its subpath) in the package's own code, whichever folder holds it.
    for (const file of sourceFiles(join(root, folder))) {
      const { named, built } = specifiersIn(root, file, scopes);
      for (const { name: other, where } of named) {
        if (other !== name && packages.has(other) && !declared.has(other)) {
          problems.push(
            `${where} names ${other}, which ${name}'s package.json does not declare: declare it (and keep the graph acyclic) or take what it offers as a parameter.`,
          );
        }
      }
      for (const { text, where } of built) {
        problems.push(
          `${where} builds a workspace package's specifier from "${text}" and an expression, which no manifest can declare: name each package in full (a map from a key to import() calls with literal specifiers).`,
        );
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
        [...edges.get(from)]
          .filter(([to]) => members.has(to))
          .map(([to, kind]) => `${from} → ${to} (${kind})`),
      );
    problems.push(
      `The workspace packages ${component.sort().join(", ")} depend on each other: ${arrows.join("; ")}. A cycle is a design error (docs/decisions/0026): the package that wants to offer the other's store takes it as a parameter and names it nowhere.`,
    );
  }
  const edgeCount = [...edges.values()].reduce((sum, declared) => sum + declared.size, 0);
  return { problems, packages: packages.size, edges: edgeCount };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { problems, packages, edges } = checkPackageGraph(
    process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), ".."),
  );
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `package graph: ${packages} workspace packages, ${edges} edges (dependencies, dev, peer, optional), no cycle; every workspace package the code names is declared\n`,
  );
}
