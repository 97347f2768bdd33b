import { describe, expect, it } from "vitest";
import { pathMatches } from "./permission-path.ts";

const cwd = "/work/project";
const root = "/work/settings-root";
const context = { cwd, homeDir: "/home/user" };

// [pattern, path (absolute), matches]: the gitignore semantics of Read/Edit rules, with Claude Code's anchors.
const CASES: [string, string, boolean][] = [
  // A pattern without a slash matches at any depth; with one, from its base only.
  ["*.env", `${cwd}/.env`, true],
  ["*.env", `${cwd}/src/deep/prod.env`, true],
  ["*.env", `${cwd}/src/prod.env.example`, false],
  [".env", `${cwd}/a/b/.env`, true],
  ["src/*.ts", `${cwd}/src/a.ts`, true],
  ["src/*.ts", `${cwd}/lib/src/a.ts`, false],
  ["src/*.ts", `${cwd}/src/deep/a.ts`, false],
  ["./src/*.ts", `${cwd}/src/a.ts`, true],
  // `**` across folders: leading, trailing, in the middle; a trailing one covers everything under the folder.
  ["docs/**", `${cwd}/docs/a/b.md`, true],
  ["docs/**", `${cwd}/docs`, false],
  ["docs/**", `${cwd}/other/docs/a.md`, false],
  ["**/secrets/*", `${cwd}/a/b/secrets/key`, true],
  ["**/secrets/*", `${cwd}/secrets/key`, true],
  ["a/**/z.txt", `${cwd}/a/z.txt`, true],
  ["a/**/z.txt", `${cwd}/a/b/c/z.txt`, true],
  ["a/**/z.txt", `${cwd}/b/a/z.txt`, false],
  // A folder's pattern (or a trailing slash) covers what is inside that folder, not a file of that name.
  ["build", `${cwd}/build/out/a.js`, true],
  ["build", `${cwd}/x/build/a.js`, true],
  ["build/", `${cwd}/build/a.js`, true],
  ["build/", `${cwd}/x/build/a.js`, true],
  ["build/", `${cwd}/build`, false],
  ["/build/", `${cwd}/build/a.js`, false],
  ["node_modules", `${cwd}/node_modules`, true],
  // Wildcards stay inside a segment; `?` is one character; classes and ranges; escapes.
  ["*.ts", `${cwd}/a.tsx`, false],
  ["src*", `${cwd}/src/a.ts`, true],
  ["s*c/a.ts", `${cwd}/s/x/c/a.ts`, false],
  ["?.md", `${cwd}/a.md`, true],
  ["?.md", `${cwd}/ab.md`, false],
  ["[ab].md", `${cwd}/b.md`, true],
  ["[ab].md", `${cwd}/c.md`, false],
  ["[a-c]x", `${cwd}/bx`, true],
  ["[!a]x", `${cwd}/bx`, true],
  ["[!a]x", `${cwd}/ax`, false],
  ["\\*.md", `${cwd}/*.md`, true],
  ["\\*.md", `${cwd}/a.md`, false],
  // A negated pattern alone re-includes and so matches nothing.
  ["!*.env", `${cwd}/.env`, false],
  ["!*.env", `${cwd}/a.txt`, false],
  // Case does not matter (as on the macOS and Windows checkouts where git ignores case).
  ["*.ENV", `${cwd}/prod.env`, true],
  ["Docs/**", `${cwd}/docs/a.md`, true],
  // The anchors: //abs from the filesystem root, ~/ from home, /path from the rule's root, else the cwd.
  ["//etc/**", "/etc/passwd", true],
  ["//etc/**", `${cwd}/etc/passwd`, false],
  ["//**/outside/**", "/tmp/x/outside/secret.txt", true],
  ["~/notes/**", "/home/user/notes/a.md", true],
  ["~/notes/**", `${cwd}/notes/a.md`, false],
  ["~", "/home/user/anything/at/all", true],
  ["~", "/home/user", true],
  ["/src/**", `${root}/src/a.ts`, true],
  ["/src/**", `${cwd}/src/a.ts`, false],
  ["/src/**", `${root}/lib/src/a.ts`, false],
  ["src/**", `${root}/src/a.ts`, false],
  // Outside the pattern's base nothing matches; the base itself only for everything.
  ["*.ts", "/elsewhere/a.ts", false],
  ["**", cwd, true],
  ["./**", cwd, true],
  ["*", cwd, false],
];

describe("pathMatches", () => {
  it.each(CASES)("%s against %s: %s", (pattern, path, matches) => {
    expect(pathMatches(pattern, path, root, context)).toBe(matches);
  });
});
