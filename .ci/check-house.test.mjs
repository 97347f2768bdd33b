// The house-size check on made-up sources: each limit is found when passed and not at its value, nested functions
// count inside their parents, and an exception covers exactly what it names. Run: `node --test .ci/`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { coveringException, LIMITS, measureFile, readExceptions } from "./check-house.mjs";

const body = (lines) => Array.from({ length: lines }, (_, line) => `  const v${line} = ${line};`).join("\n");

test("a function's length is its lines from the first to the closing brace", () => {
  const source = `export function short() {\n${body(LIMITS.functionLines - 2)}\n}\n`;
  const [fn] = measureFile("a.ts", source).functions;
  assert.deepEqual(fn, { name: "short", line: 1, lines: LIMITS.functionLines });
});

test("arrow functions, methods and factories' closures are named after what holds them, nested ones counted too", () => {
  const source = [
    "export const make = () => {",
    "  return {",
    "    run() {",
    body(3),
    "    },",
    "  };",
    "};",
    "class A { method() { return 1; } }",
  ].join("\n");
  const names = measureFile("a.ts", source).functions.map((fn) => `${fn.name}:${fn.lines}`);
  assert.deepEqual(names, ["make:9", "run:5", "method:1"]);
});

test("a file's length does not count the final newline", () => {
  assert.equal(measureFile("a.ts", "a;\nb;\n").lines, 2);
  assert.equal(measureFile("a.ts", "a;\nb;").lines, 2);
});

test("exceptions come from AGENTS.md's section, each with its reason", () => {
  const agents = [
    "# AGENTS.md",
    "## Size exceptions",
    "- `packages/x/src/big.ts#describeContract` — a contract suite read as one list of cases",
    "- `packages/y/` — not yet split into folders",
    "## Next section",
    "- `packages/z/src/a.ts` — not an exception: another section",
  ].join("\n");
  const exceptions = readExceptions(agents);
  assert.deepEqual([...exceptions.keys()], ["packages/x/src/big.ts#describeContract", "packages/y/"]);
  assert.match(exceptions.get("packages/y/"), /not yet split/);
});

test("an exception covers the function it names, its file's functions, or everything below its folder", () => {
  const exceptions = new Map([
    ["packages/x/src/big.ts#describeContract", "r"],
    ["packages/y/", "r"],
    ["packages/w/src/long.ts", "r"],
  ]);
  const fn = (target) => ({ kind: "function", target });
  assert.equal(
    coveringException(fn("packages/x/src/big.ts#describeContract"), exceptions),
    "packages/x/src/big.ts#describeContract",
  );
  assert.equal(coveringException(fn("packages/x/src/big.ts#other"), exceptions), undefined);
  assert.equal(coveringException(fn("packages/y/src/deep/a.ts#f"), exceptions), "packages/y/");
  assert.equal(coveringException({ kind: "folder", target: "packages/y/src/" }, exceptions), "packages/y/");
  assert.equal(coveringException(fn("packages/w/src/long.ts#f"), exceptions), "packages/w/src/long.ts");
  assert.equal(
    coveringException({ kind: "file", target: "packages/w/src/long.ts" }, exceptions),
    "packages/w/src/long.ts",
  );
  assert.equal(coveringException({ kind: "file", target: "packages/x/src/big.ts" }, exceptions), undefined);
});
