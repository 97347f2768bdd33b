import { describe, expect, it } from "vitest";
import { createBuiltinTools } from "./builtin-tools.ts";

describe("createBuiltinTools", () => {
  it("says for every tool what compaction may do with its old results", () => {
    const retention = Object.fromEntries(
      createBuiltinTools().map((tool) => [tool.name, tool.resultRetention]),
    );
    expect(retention).toEqual({
      // Read-only: called again, they answer again.
      Read: "reproducible",
      Glob: "reproducible",
      Grep: "reproducible",
      TodoWrite: "reproducible",
      // What they report is the file on disk.
      Write: "reproducible",
      Edit: "reproducible",
      // A command's output: saved to the session folder before it is cleared.
      Bash: "persist",
    });
  });
});
