// The footprint budget on measured numbers made for each case (installing is the benchmark's part): each limit
// fails when it is passed and holds at its value. Run: `node --test .ci/` (`pnpm run check` does).
import assert from "node:assert/strict";
import { test } from "node:test";
import { overBudget } from "./check-footprint.mjs";

const measured = (thirdPartyNames, more = {}) => ({
  packages: thirdPartyNames.length + 2,
  thirdParty: thirdPartyNames.length,
  unforget: 2,
  bytes: 3_000_000,
  webFrameworks: [],
  thirdPartyNames,
  ...more,
});

test("holds at its limits", () => {
  assert.deepEqual(overBudget("@unforget/x", measured(["tapable"]), { all: 3, thirdParty: 1, MB: 3 }), []);
});

test("fails over each limit, naming the number and the budget", () => {
  const problems = overBudget("@unforget/x", measured(["a", "b"]), { all: 3, thirdParty: 1, MB: 2.9 });
  assert.equal(problems.length, 3);
  assert.match(problems[0], /@unforget\/x brings 4 packages in all, over its budget of 3/);
  assert.match(problems[1], /2 third-party packages, over its budget of 1/);
  assert.match(problems[2], /3\.0 MB, over its budget of 2\.9/);
});

test("`only` allows the packages it lists and no other", () => {
  assert.deepEqual(overBudget("@unforget/compact", measured(["tapable"]), { only: ["tapable"] }), []);
  assert.match(
    overBudget("@unforget/compact", measured(["tapable", "ms"]), { only: ["tapable"] })[0],
    /brings ms/,
  );
  assert.match(
    overBudget("@unforget/core", measured(["ms"]), { only: [] })[0],
    /allows no third-party package/,
  );
});

test('`forbid: ["webFrameworks"]` fails on any web framework, and on a package named alone', () => {
  for (const framework of [
    "express",
    "hono",
    "@hono/node-server",
    "fastify",
    "koa",
    "cors",
    "express-rate-limit",
  ]) {
    const problems = overBudget("@unforget/tools", measured(["re2js", framework]), {
      forbid: ["webFrameworks"],
    });
    assert.equal(problems.length, 1, framework);
    assert.match(
      problems[0],
      new RegExp(`brings ${framework}, which its budget forbids \\(webFrameworks\\)`),
    );
  }
  assert.deepEqual(overBudget("@unforget/tools", measured(["re2js"]), { forbid: ["webFrameworks"] }), []);
  assert.equal(overBudget("@unforget/tools", measured(["jose"]), { forbid: ["jose"] }).length, 1);
});

test("fails on a package without a budget and on a key the check does not read", () => {
  assert.match(overBudget("@unforget/new", measured([]), undefined)[0], /has no budget/);
  assert.match(
    overBudget("@unforget/x", measured([]), { thirdparty: 0 })[0],
    /thirdparty, which the check does not read/,
  );
});
