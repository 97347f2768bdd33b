import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import picomatch from "picomatch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToolHarness, git, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { compileGitignore, compileGlob, splitGlobBase } from "./glob-pattern.ts";

const PATHS = [
  "a",
  "a.ts",
  "a.tsx",
  ".env",
  "src/a.ts",
  "src/a.test.ts",
  "src/.hidden/x.ts",
  "src/deep/er/b.js",
  "lib/x.ts",
  "a/b/c",
  "axb",
  "ax/b",
  "a*b",
  "a{b",
  "a[b",
  "abab.ts",
  "q",
  "1",
  "a/2",
  ".git/x",
  "$x^",
  "a+b",
  "docs/README.md",
  "docs/readme.md",
];

const GLOBS = [
  "*",
  "**",
  "**/*",
  "*.ts",
  "**/*.ts",
  "*.{ts,tsx}",
  "src/**/*.test.{js,ts}",
  "{src,lib}/**/*.ts",
  "src/*/x.ts",
  "a/**",
  "a/**/c",
  "**/c",
  "a**b",
  "**.js",
  "a?b",
  "a\\*b",
  "a{b",
  "a[b",
  "[a-c]x?b",
  "[[:alpha:]]",
  "[[:digit:]]",
  "(a|b).ts",
  "+(ab).ts",
  "@(a|q)",
  "?(a).ts",
  "*(ab).ts",
  "!*.ts",
  "./a.ts",
  "a/{1..3}",
  "{,a}.ts",
  "**/.git/**",
  "$x^",
  "a+b",
  "docs/[Rr]EADME.md",
];

describe("compileGlob", () => {
  it.each(GLOBS)("matches %s as picomatch does (dot: true)", (pattern) => {
    const ours = compileGlob(pattern);
    const theirs = picomatch(pattern, { dot: true });
    expect(PATHS.filter((path) => ours(path))).toEqual(PATHS.filter((path) => theirs(path)));
  });

  it("reads [!a] as bash does (picomatch treats it as a negation of the whole pattern)", () => {
    expect(compileGlob("[!a]x")("bx")).toBe(true);
    expect(compileGlob("[!a]x")("ax")).toBe(false);
    // A class never matches the folder separator.
    expect(compileGlob("a[!b]c")("a/c")).toBe(false);
    expect(compileGlob("a[+-0]c")("a/c")).toBe(false);
  });

  it("matches the file name only with matchBase, when the pattern has no slash", () => {
    expect(compileGlob("*.ts", { matchBase: true })("src/deep/a.ts")).toBe(true);
    expect(compileGlob("src/*.ts", { matchBase: true })("src/deep/a.ts")).toBe(false);
  });

  it("splits the literal folders a walk can start from", () => {
    expect(splitGlobBase("src/lib/**/*.ts")).toEqual({ base: "src/lib", glob: "**/*.ts", isGlob: true });
    expect(splitGlobBase("*.ts")).toEqual({ base: "", glob: "*.ts", isGlob: true });
    expect(splitGlobBase("/abs/x/*.ts")).toEqual({ base: "/abs/x", glob: "*.ts", isGlob: true });
    expect(splitGlobBase("src/a.ts")).toEqual({ base: "src/a.ts", glob: "", isGlob: false });
    expect(splitGlobBase("s\\*c/a.ts").base).toBe("");
  });
});

describe("compileGitignore against git itself", () => {
  let harness: ToolHarness;
  const RULES = [
    "*.log",
    "!keep.log",
    "build/",
    "/top.txt",
    "docs/*.tmp",
    "**/cache",
    "out/**",
    "!out/kept",
    "a/**/z",
    "*.[oa]",
    "[!x]y.c",
    "\\#hash",
    "\\!bang",
    "trailing\\ ",
    "spaced   ",
    "# a comment",
    "",
    "deep/**/*.gen.ts",
    "ab**cd",
    "q?r",
  ];
  const ENTRIES: [string, boolean][] = [
    ["x.log", false],
    ["keep.log", false],
    ["sub/x.log", false],
    ["build", true],
    ["sub/build", true],
    ["build.txt", false],
    ["top.txt", false],
    ["sub/top.txt", false],
    ["docs/a.tmp", false],
    ["docs/sub/a.tmp", false],
    ["cache", true],
    ["x/y/cache", false],
    ["out/a", false],
    ["out/kept", false],
    ["out", true],
    ["a/z", false],
    ["a/b/c/z", false],
    ["lib.o", false],
    ["lib.a", false],
    ["lib.c", false],
    ["yy.c", false],
    ["xy.c", false],
    ["#hash", false],
    ["!bang", false],
    ["trailing ", false],
    ["spaced", false],
    ["deep/x/y.gen.ts", false],
    ["deep/y.gen.ts", false],
    ["abXXcd", false],
    ["ab/cd", false],
    ["qxr", false],
    ["q/r", false],
  ];

  beforeAll(async () => {
    harness = await createToolHarness("unforget-gitignore-");
    git(harness.cwd, "init", "-q");
    await writeFile(join(harness.cwd, ".gitignore"), `${RULES.join("\n")}\n`);
    for (const [path, isFolder] of ENTRIES) {
      const full = join(harness.cwd, path);
      if (isFolder) await mkdir(full, { recursive: true });
      else {
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, "");
      }
    }
  });
  afterAll(async () => {
    await harness.close();
  });

  it("decides every path as `git check-ignore` does", () => {
    const rules = compileGitignore(`${RULES.join("\n")}\n`);
    const gitSays = (path: string): boolean => {
      try {
        // -v prints the deciding rule; a negated one (`!…`) means the path is not ignored.
        // The path exists on disk, so git knows a folder from a file.
        const line = git(harness.cwd, "check-ignore", "-v", "--no-index", path);
        return !/:\d+:!/.test(line);
      } catch {
        return false;
      }
    };
    const differences = ENTRIES.filter(
      ([path, isFolder]) => (rules?.decide(path, isFolder) === "ignored") !== gitSays(path),
    );
    expect(differences).toEqual([]);
  });
});
