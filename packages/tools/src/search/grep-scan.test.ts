import { describe, expect, it } from "vitest";
import { type GrepScanJob, scanFiles } from "./grep-scan.ts";

/** Files in memory, so the scan's rules are tested on their own (the tool tests cover the worker). */
function scan(files: Record<string, string | Uint8Array>, job: Partial<GrepScanJob> & { source: string }) {
  return scanFiles(
    {
      files: Object.keys(files),
      flags: "",
      multiline: false,
      mode: "content",
      before: 0,
      after: 0,
      maxLineChars: 500,
      maxLinesPerFile: 100,
      maxFileBytes: 1_000,
      ...job,
    },
    {
      read(path, maxBytes) {
        const content = files[path]!;
        const bytes = typeof content === "string" ? Buffer.from(content) : content;
        if (path === "unreadable") throw new Error("EACCES");
        return bytes.length > maxBytes ? undefined : { bytes, mtimeMs: 1 };
      },
    },
  );
}

describe("scanFiles", () => {
  it("matches lines one at a time: a match across a line break does not count unless multiline", () => {
    const text = "alpha\nbeta gamma\ngamma\n";
    expect(scan({ a: text }, { source: "a\\sb" }).results).toEqual([]);
    expect(scan({ a: text }, { source: "a\\sb", multiline: true }).results[0]?.lines).toEqual([
      [1, "alpha", true],
      [2, "beta gamma", true],
    ]);
    expect(scan({ a: text }, { source: "gamma" }).results[0]).toMatchObject({ matches: 2 });
    expect(scan({ a: text }, { source: "^gamma$" }).results[0]?.lines).toEqual([[3, "gamma", true]]);
    // An expression that could span lines is checked on the line alone, yet still finds later matches.
    expect(scan({ a: "x\ny z\n" }, { source: "[^a]z" }).results[0]?.lines).toEqual([[2, "y z", true]]);
    expect(scan({ a: "ab\n" }, { source: "$" }).results[0]?.matches).toBe(1);
  });

  it("shows context lines once, merged where they overlap, and counts past the lines it keeps", () => {
    const text = ["1", "match 2", "3", "match 4", "5", "6", "7", "match 8"].join("\n");
    const result = scan({ a: text }, { source: "match", before: 1, after: 1 }).results[0]!;
    expect(result.lines).toEqual([
      [1, "1", false],
      [2, "match 2", true],
      [3, "3", false],
      [4, "match 4", true],
      [5, "5", false],
      [7, "7", false],
      [8, "match 8", true],
    ]);
    const capped = scan({ a: text }, { source: "match", maxLinesPerFile: 1 }).results[0]!;
    expect(capped).toMatchObject({ matches: 3, lines: [[2, "match 2", true]] });
    expect(scan({ a: text }, { source: "match", mode: "count" }).results[0]).toMatchObject({
      matches: 3,
      lines: [],
    });
    expect(scan({ a: text }, { source: "match", mode: "files_with_matches" }).results[0]).toMatchObject({
      matches: 1,
    });
  });

  it("skips binary, large and unreadable files, reads UTF-16 and CRLF text, and cuts long lines", () => {
    const result = scan(
      {
        binary: Buffer.from([0x61, 0x00, 0x62]),
        large: "a".repeat(2_000),
        unreadable: "a",
        wide: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("wide a\r\n", "utf16le")]),
        dos: "a line\r\n",
        long: `${"a".repeat(600)}\n`,
      },
      { source: "a" },
    );
    expect(result).toMatchObject({ skippedBinary: 1, skippedLarge: 1, unreadable: 1 });
    expect(result.results.map((file) => file.lines[0]?.[1])).toEqual([
      "wide a",
      "a line",
      `${"a".repeat(500)}… [100 more characters]`,
    ]);
  });
});
