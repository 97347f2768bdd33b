// The house rules for code size, measured with TypeScript's own parser over every package's and app's `src`
// (tests, fixtures and generated code aside): no function over 100 lines (a nested function counts inside its
// parent too), no source file over 500 lines, no folder with more than 15 source files directly in it. An
// exception is a line of AGENTS.md's "Size exceptions" section naming the file (`path`), the function
// (`path#name`) or the folder (`path/`) with its reason; a line for a folder of packages covers everything below it.
//
//   node .ci/check-house.mjs            fail on anything over a limit that no exception names
//   node .ci/check-house.mjs --report   list everything over a limit, exceptions too, largest first
//   --only packages/compact             one package or folder (repeatable)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import ts from "typescript";
import { workspacePackages } from "./workspace.mjs";

export const LIMITS = { functionLines: 100, fileLines: 500, folderFiles: 15 };

const root = resolve(import.meta.dirname, "..");

/** Source files that count: TypeScript in src, not tests, fixtures, declarations or generated code. */
function isCountedSource(path) {
  return (
    /\.(ts|tsx|mts)$/.test(path) &&
    !/\.d\.ts$/.test(path) &&
    !/\.generated\.tsx?$/.test(path) &&
    !/\.(test|eval\.test|bench|spec)\.tsx?$/.test(path) &&
    !/(^|\/)(__fixtures__|__tests__|generated)(\/|$)/.test(path)
  );
}

function walk(folder) {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** The name a reader would search for: the declaration's own, or the variable or property it is assigned to. */
function functionName(node, text) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && (ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name)))
    return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(text);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(text);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  return "(anonymous)";
}

/** Every function in one file with its length in lines, and the file's own length. */
export function measureFile(path, source = readFileSync(path, "utf8")) {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const lineOf = (position) => file.getLineAndCharacterOfPosition(position).line;
  const functions = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(file)) + 1;
      functions.push({ name: functionName(node, file), line: lineOf(node.getStart(file)) + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { lines: source.split("\n").length - (source.endsWith("\n") ? 1 : 0), functions };
}

/** The "Size exceptions" section of AGENTS.md (a `##` or `###` heading): each `- \`target\` — reason` line. */
export function readExceptions(agents) {
  const section = /^#{2,3} Size exceptions\n([\s\S]*?)(?=^#{1,3} |(?![\s\S]))/m.exec(agents)?.[1] ?? "";
  const exceptions = new Map();
  for (const match of section.matchAll(/^- `([^`]+)`\s*(?:—|-|:)\s*(.+)$/gm))
    exceptions.set(match[1], match[2]);
  return exceptions;
}

/** Everything over a limit under the given folders (relative to the repository). */
export function findOversize(folders) {
  const found = [];
  for (const folder of folders) {
    const src = join(root, folder, "src");
    if (!existsSync(src)) continue;
    const files = walk(src).filter((path) => isCountedSource(relative(root, path)));
    const perFolder = new Map();
    for (const path of files) {
      const rel = relative(root, path);
      const dir = rel.slice(0, rel.lastIndexOf("/"));
      perFolder.set(dir, (perFolder.get(dir) ?? 0) + 1);
      const measured = measureFile(path);
      if (measured.lines > LIMITS.fileLines) {
        found.push({ kind: "file", target: rel, size: measured.lines, limit: LIMITS.fileLines });
      }
      for (const fn of measured.functions) {
        if (fn.lines > LIMITS.functionLines) {
          found.push({
            kind: "function",
            target: `${rel}#${fn.name}`,
            at: `${rel}:${fn.line}`,
            size: fn.lines,
            limit: LIMITS.functionLines,
          });
        }
      }
    }
    for (const [dir, count] of perFolder) {
      if (count > LIMITS.folderFiles) {
        found.push({ kind: "folder", target: `${dir}/`, size: count, limit: LIMITS.folderFiles });
      }
    }
  }
  return found.sort((a, b) => b.size / b.limit - a.size / a.limit);
}

/** The exception that covers a finding: itself, its file (for a function), or a folder above it. */
export function coveringException(finding, exceptions) {
  const candidates = [finding.target];
  if (finding.kind === "function") candidates.push(finding.target.slice(0, finding.target.indexOf("#")));
  const path = finding.target.replace(/#.*$/, "").replace(/\/$/, "");
  const parts = path.split("/");
  for (let end = parts.length - (finding.kind === "folder" ? 0 : 1); end > 0; end--) {
    candidates.push(`${parts.slice(0, end).join("/")}/`);
  }
  return candidates.find((candidate) => exceptions.has(candidate));
}

if (import.meta.main ?? process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: { report: { type: "boolean", default: false }, only: { type: "string", multiple: true } },
  });
  const folders = values.only ?? workspacePackages(root).map(({ folder }) => folder);
  const exceptions = readExceptions(readFileSync(join(root, "AGENTS.md"), "utf8"));
  const found = findOversize(folders);
  const unexcused = found.filter((finding) => coveringException(finding, exceptions) === undefined);
  const unit = { function: "lines", file: "lines", folder: "source files" };
  for (const finding of values.report ? found : unexcused) {
    const covered = coveringException(finding, exceptions);
    console.log(
      `${finding.kind.padEnd(8)} ${String(finding.size).padStart(4)} ${unit[finding.kind]} (limit ${finding.limit})  ${finding.at ?? finding.target}${finding.kind === "function" ? ` ${finding.target.slice(finding.target.indexOf("#") + 1)}` : ""}${covered ? `  [exception: ${covered}]` : ""}`,
    );
  }
  const stale = [...exceptions.keys()].filter(
    (target) =>
      !existsSync(join(root, target.replace(/#.*$/, ""))) ||
      (target.includes("#") && !found.some((finding) => finding.target === target)),
  );
  for (const target of stale) console.log(`stale exception (nothing over a limit there now): ${target}`);
  if (unexcused.length > 0 || stale.length > 0) {
    console.error(
      `\nhouse: ${unexcused.length} over a limit without an exception${stale.length ? `, ${stale.length} stale exception(s)` : ""}. Split the function, file or folder, or add a line with its reason to AGENTS.md's "Size exceptions".`,
    );
    process.exitCode = 1;
  } else {
    console.log(
      `house: ${found.length} over a limit, each covered by an exception in AGENTS.md (functions ≤ ${LIMITS.functionLines} lines, files ≤ ${LIMITS.fileLines}, folders ≤ ${LIMITS.folderFiles} source files)`,
    );
  }
}
