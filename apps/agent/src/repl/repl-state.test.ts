import { describe, expect, it } from "vitest";
import { describeNextCompaction } from "./repl-state.ts";

describe("describeNextCompaction", () => {
  it("says when, in words, one turn in the singular and a far one as far", () => {
    expect(describeNextCompaction(undefined)).toBeUndefined();
    expect(describeNextCompaction(0)).toBe("compaction due");
    expect(describeNextCompaction(1)).toBe("compaction in about 1 turn");
    expect(describeNextCompaction(12)).toBe("compaction in about 12 turns");
    expect(describeNextCompaction(14_610)).toBe("compaction in 100+ turns");
  });
});
