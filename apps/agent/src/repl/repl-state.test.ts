import { describe, expect, it } from "vitest";
import { describeNextCompaction, nextCompactionLine } from "./repl-state.ts";

describe("describeNextCompaction", () => {
  it("says when, in words, one turn in the singular and a far one as far", () => {
    expect(describeNextCompaction(undefined)).toBeUndefined();
    expect(describeNextCompaction(0)).toBe("compaction due");
    expect(describeNextCompaction(1)).toBe("compaction in about 1 turn");
    expect(describeNextCompaction(12)).toBe("compaction in about 12 turns");
    expect(describeNextCompaction(14_610)).toBe("compaction in 100+ turns");
  });
});

describe("nextCompactionLine", () => {
  it("says when, or why that is not known yet", () => {
    expect(nextCompactionLine({ turnsUntilCompaction: 3 })).toBe("compaction in about 3 turns");
    expect(
      nextCompactionLine({
        turnsUntilCompaction: undefined,
        growthUnknown: "it needs the growth of 2 calls and 1 is known",
      }),
    ).toBe("when the next compaction comes is not known yet (it needs the growth of 2 calls and 1 is known)");
    expect(nextCompactionLine({ turnsUntilCompaction: undefined })).toBe(
      "when the next compaction comes is not known yet",
    );
  });
});
