import { describe, expect, it } from "vitest";

// The root `test` and `check` scripts and .ci/node-versions name the Node that runs the suites
// (UNFORGET_NODE_VERSION, part of turbo's test hash; .ci/check-test-runs.mjs checks that hash). This checks the
// other half: the Node that runs vitest is the one named, so a PATH that picked another binary cannot pass as a
// Node 22 or 24 run.
describe("the Node version a run names", () => {
  it("is the Node running the tests", () => {
    const named = process.env.UNFORGET_NODE_VERSION;
    if (named === undefined) return; // vitest started by hand: no run to check
    expect(process.version, `the run names ${named}`).toBe(named);
  });
});
