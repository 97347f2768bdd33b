// The package-graph check on small workspaces made for each case: it must fail on what it guards against and
// pass on what only looks like it. Run: `node --test .ci/` (`pnpm run check` does).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { checkPackageGraph } from "./check-package-graph.mjs";

const scratch = mkdtempSync(join(tmpdir(), "unforget-graph-check-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let count = 0;
/** A workspace of packages `@unforget/a` (depending on `aDeps`) and `@unforget/b`, with `files` in a's folder. */
function workspace({ files = {}, aDeps = {}, bDeps = {}, yaml } = {}) {
  const root = join(scratch, `w${count++}`);
  const write = (path, text) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write(
    "pnpm-workspace.yaml",
    yaml ?? '# the packages\npackages:\n  - "packages/*" # every package\n\ncatalog:\n  yaml: 2.9.1\n',
  );
  write("packages/a/package.json", JSON.stringify({ name: "@unforget/a", dependencies: aDeps }));
  write("packages/b/package.json", JSON.stringify({ name: "@unforget/b", dependencies: bDeps }));
  for (const [path, text] of Object.entries(files)) write(`packages/a/${path}`, text);
  return root;
}

/** The check's outcome: `code` 1 with the problems in `stderr` when it fails, as the command prints them. */
function check(root) {
  const { problems, packages, edges } = checkPackageGraph(root);
  return {
    code: problems.length > 0 ? 1 : 0,
    stdout: `${packages} workspace packages, ${edges} edges`,
    stderr: problems.join("\n"),
  };
}

test("passes a clean workspace, with comments and prose naming undeclared packages", () => {
  const result = check(
    workspace({
      files: {
        "src/index.ts": [
          "// import { b } from `@unforget/b`;",
          '/** Works with `@unforget/b` (see "@unforget/b"). */',
          'export const text = "install @unforget/b first";',
        ].join("\n"),
      },
    }),
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /2 workspace packages, 0 edges/);
});

test("fails on an undeclared package in a template literal", () => {
  const result = check(
    workspace({ files: { "src/load.ts": "export const load = () => import(`@unforget/b/testing`);\n" } }),
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /packages\/a\/src\/load\.ts:1 names @unforget\/b/);
});

test("passes the same import once it is declared", () => {
  const result = check(
    workspace({
      files: { "src/load.ts": "export const load = () => import(`@unforget/b/testing`);\n" },
      aDeps: { "@unforget/b": "workspace:*" },
    }),
  );
  assert.equal(result.code, 0, result.stderr);
});

test("reads every folder with code, not only src and bench", () => {
  for (const path of ["scripts/bundle.mjs", "test/e2e.ts", "fixtures/x/run.js", "bin/cli.cjs"]) {
    const result = check(workspace({ files: { [path]: 'await import("@unforget/b");\n' } }));
    assert.equal(result.code, 1, path);
    assert.match(result.stderr, new RegExp(`packages/a/${path.replace(".", "\\.")}:1 names @unforget/b`));
  }
  const ignored = check(
    workspace({
      files: {
        "dist/index.js": 'import "@unforget/b";\n',
        "node_modules/x/index.js": 'import "@unforget/b";\n',
      },
    }),
  );
  assert.equal(ignored.code, 0, ignored.stderr);
});

test("fails on a specifier built from an expression", () => {
  for (const code of [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the code under test holds a template literal.
    "export const load = (name: string) => import(`@unforget/${name}`);\n",
    'export const load = (name: string) => import("@unforget/" + name);\n',
  ]) {
    const result = check(workspace({ files: { "src/load.ts": code } }));
    assert.equal(result.code, 1, code);
    assert.match(result.stderr, /packages\/a\/src\/load\.ts:1 builds a workspace package's specifier/);
  }
});

test("fails on a cycle through any kind of dependency", () => {
  const result = check(
    workspace({ aDeps: { "@unforget/b": "workspace:*" }, bDeps: { "@unforget/a": "workspace:*" } }),
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /@unforget\/a, @unforget\/b depend on each other/);
});

test("reads pnpm-workspace.yaml as YAML: flow lists, negations", () => {
  const root = workspace({
    yaml: "packages: ['packages/*', '!packages/b']\n",
    files: { "src/index.ts": 'import "@unforget/b";\n' },
  });
  // b is not a workspace package, so naming it is not an undeclared workspace edge.
  const result = check(root);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /1 workspace packages/);
});
