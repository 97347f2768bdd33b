import { createHangGuard } from "@unforget/testing/guard";
import { afterAll, describe, expect, it } from "vitest";
import type * as HostileTexts from "./__fixtures__/hostile-texts.ts";

// Huge runs of one character or one short pattern: the texts that make a scanner slow. Each estimate runs in a
// worker behind a hang guard (20 s per call, far above what any needs): a scan that does not end fails the test
// with a HangError naming it, instead of holding the test's thread past every timeout. Nothing here measures
// speed; the counts must grow in proportion to the text.

const guard = createHangGuard<typeof HostileTexts>(
  new URL("./__fixtures__/hostile-texts.ts", import.meta.url),
);
afterAll(() => guard.close());

function expectCount(value: unknown, label: string): void {
  if (!(typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0))) {
    expect.fail(`${label} returned ${String(value)}, not a finite non-negative integer`);
  }
}

describe("hostile input: huge runs", () => {
  it.each([
    "a",
    "Z",
    "1",
    " ",
    "\t",
    "\n",
    "-",
    ".",
    "é",
    "中",
    "ア",
    "😀",
    "\uD800",
    "\uDC00",
    "aB3",
    "ab1",
    "\r\n",
  ])("counts %j × 400,000 in proportion to its length, in every profile", async (unit) => {
    for (const { profile, short, long } of await guard.call("estimateRuns", unit, 100_000, 400_000)) {
      expectCount(long, `estimateTextTokens(${JSON.stringify(unit)} × 400,000, ${profile})`);
      expect(long).toBeGreaterThanOrEqual(short);
      expect(long).toBeLessThanOrEqual(4 * short + 4);
    }
  });

  it("counts a 4 MB session file made of one line repeated as that many lines at most", async () => {
    const line = `${JSON.stringify({
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_01", name: "Read", input: { file_path: "src/index.ts" } }],
      },
      uuid: "0b6f0e8e-6a4c-4f59-9d1e-7c3f5f1e2a10",
    })}\n`;
    const { line: unit, text, repeats } = await guard.call("estimateRepeatedLine", line, 4_000_000);
    expectCount(text, "estimateTextTokens(4 MB)");
    expect(text).toBeLessThanOrEqual(unit * repeats + 1);
    expect(text).toBeGreaterThan(repeats);
  });
});
