import { execFileSync } from "node:child_process";
import { mkdir, open, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createHangGuard } from "@unforget/testing/guard";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type * as HostileCalls from "./__fixtures__/hostile-calls.ts";
import type { HostileToolName } from "./__fixtures__/hostile-calls.ts";
import { createToolHarness, type ToolHarness } from "./__fixtures__/tool-harness.ts";
import { createBashTool } from "./bash/bash-tool.ts";
import { createGlobTool } from "./search/glob-tool.ts";

// Inputs a model (or a repository it works in) controls: a pattern, a path, a size. Each call runs in a worker
// behind a hang guard: the synchronous work a hostile input sets off (a pattern matched against long names, a
// scan of a large file) holds the worker's thread, never this one, so a call that does not settle within the
// guard's deadline (20 s, far above what any of them needs) fails with a HangError naming it, instead of
// hanging the suite. The cases that once hung took 30 s to forever. Nothing here measures speed.

/** The longest name most file systems take (255 bytes). */
const LONG_NAME = "a".repeat(250);

const guard = createHangGuard<typeof HostileCalls>(
  new URL("./__fixtures__/hostile-calls.ts", import.meta.url),
);
afterAll(() => guard.close());

describe("hostile inputs to the built-in tools", () => {
  let harness: ToolHarness;
  const glob = createGlobTool();
  const bash = createBashTool({ killGraceMs: 100 });

  beforeEach(async () => {
    harness = await createToolHarness("unforget-hostile-");
  });
  afterEach(async () => {
    await harness.close();
  });

  /** The text of a tool's result, called in the guarded worker in this test's folder. */
  async function settles(tool: HostileToolName, input: Record<string, unknown>): Promise<string> {
    return (await guard.call("callTool", tool, harness.cwd, input)).text;
  }

  describe("patterns", () => {
    beforeEach(async () => {
      await mkdir(join(harness.cwd, "d"));
      await writeFile(join(harness.cwd, "d", LONG_NAME), "needle\n");
      await writeFile(join(harness.cwd, "d", `${LONG_NAME.slice(1)}b`), "needle\n");
    });

    it.each([
      "d/*a*a*a*a*c",
      "d/*a*a*a*a*a*a*c",
      "**/*a*a*a*a*a*a*a*a*c",
      "d/*a?*a?*a?*a?*a?*a?*c",
      "d/*[a]*[a]*[a]*[a]*[a]*[a]*c",
      "d/+(a|aa)+(a|aa)+(a|aa)c",
      "d/*(a*a)*(a*a)*(a*a)c",
      "{d,d}/{*a,*a*}{*a,*a*}{*a,*a*}{*a,*a*}c",
      "**/**/**/**/**/**/**/**/*c",
    ])("Glob %s settles against 250-character names", async (pattern) => {
      expect(await settles("Glob", { pattern })).toBe("No files found.");
    });

    it("Glob still finds what a star-heavy pattern matches", async () => {
      expect(await settles("Glob", { pattern: "d/*a*a*a*a*b" })).toBe(`d/${LONG_NAME.slice(1)}b`);
    });

    it("Grep's glob filter settles against 250-character names", async () => {
      const text = await settles("Grep", { pattern: "needle", glob: "*a*a*a*a*a*a*c" });
      expect(text).toBe("No matches found.");
      expect(await settles("Grep", { pattern: "needle", glob: "*a*a*a*a*b" })).toContain(
        `d/${LONG_NAME.slice(1)}b`,
      );
    });

    it("refuses a pattern too long, a range too large, and a negated group, with what to do", async () => {
      expect(await settles("Glob", { pattern: `*${"a*".repeat(5_000)}` })).toContain("characters long");
      expect(await settles("Glob", { pattern: "d/file-{1..100000000}" })).toContain("use a wildcard");
      expect(await settles("Glob", { pattern: "d/!(x)" })).toContain("negated group");
      expect(await settles("Grep", { pattern: "x", glob: "*a ".repeat(3_000) })).toContain("characters long");
    });

    it(".gitignore rules from the repository settle too: stars, globstars, a FIFO and a device", async () => {
      let deep = harness.cwd;
      for (let level = 0; level < 60; level++) deep = join(deep, "a");
      await mkdir(deep, { recursive: true });
      await writeFile(join(deep, "kept.txt"), "needle\n");
      await writeFile(
        join(harness.cwd, ".gitignore"),
        `*a*a*a*a*a*a*a*a*c\na/**/**/**/**/**/**/**/**/**/**/b\n**/a/**/a/**/a/**/a/**/a/**/b\n`,
      );
      execFileSync("mkfifo", [join(harness.cwd, "d", ".gitignore")]);
      await symlink("/dev/zero", join(harness.cwd, "a", ".ignore"));
      const listed = (await settles("Glob", { pattern: "**/*.txt" })).split("\n");
      expect(listed).toEqual([`${"a/".repeat(60)}kept.txt`]);
      expect(await settles("Grep", { pattern: "needle", output_mode: "count" })).toContain("kept.txt:1");
    });
  });

  describe("aborts", () => {
    it("an aborted Glob over a large folder answers, saying it was interrupted", async () => {
      await mkdir(join(harness.cwd, "many"));
      await Promise.all(
        Array.from({ length: 2_000 }, (_, index) =>
          writeFile(join(harness.cwd, "many", `${index}-${LONG_NAME.slice(0, 200)}`), ""),
        ),
      );
      // The signal cannot cross into a worker: these calls run here, under vitest's timeout.
      const controller = new AbortController();
      const call = harness.call(glob, { pattern: "many/*a*a*a*a*a*a*a*a*a*a*c" }, controller.signal);
      // Aborted before the walk has listed the folder (a listing takes a turn of the event loop at least).
      await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      const output = await call;
      expect(output.isError).toBe(false);
      expect(harness.text(output)).toContain("interrupted");

      const already = new AbortController();
      already.abort();
      expect(harness.text(await harness.call(glob, { pattern: "many/*" }, already.signal))).toContain(
        "interrupted",
      );
    });
  });

  describe("paths", () => {
    it.each([
      ["a path of 10 000 characters", "x".repeat(10_000)],
      ["a path 3 000 folders deep", "a/".repeat(3_000).slice(0, -1)],
      ["a NUL byte", "a\u0000b"],
      ["encoded dots", "%2e%2e/%2e%2e/etc/passwd"],
    ])("every file tool answers %s with an error result", async (_, path) => {
      for (const [tool, input] of [
        ["Read", { file_path: path }],
        ["Write", { file_path: path, content: "x" }],
        ["Edit", { file_path: path, old_string: "", new_string: "x" }],
        ["Glob", { pattern: "*", path }],
        ["Grep", { pattern: "x", path }],
      ] as const) {
        expect((await guard.call("callTool", tool, harness.cwd, input)).isError, tool).toBe(true);
      }
    });

    it("a tree 300 folders deep is walked without a stack overflow", async () => {
      const deep = join(harness.cwd, ...Array.from({ length: 300 }, () => "d"));
      await mkdir(deep, { recursive: true });
      await writeFile(join(deep, "bottom.txt"), "needle\n");
      expect(await settles("Glob", { pattern: "**/bottom.txt" })).toBe(`${"d/".repeat(300)}bottom.txt`);
      expect(await settles("Grep", { pattern: "needle" })).toContain("bottom.txt");
    });

    it("FIFOs are refused by every file tool without blocking, by name or among files searched", async () => {
      execFileSync("mkfifo", [join(harness.cwd, "pipe.txt")]);
      expect(await settles("Read", { file_path: "pipe.txt" })).toContain("named pipe");
      expect(await settles("Write", { file_path: "pipe.txt", content: "x" })).toContain("named pipe");
      expect(await settles("Edit", { file_path: "pipe.txt", old_string: "a", new_string: "b" })).toContain(
        "named pipe",
      );
      expect(await settles("Glob", { pattern: "*.txt" })).toBe("No files found.");
      expect(await settles("Grep", { pattern: "x", path: "pipe.txt" })).toBe("No matches found.");
      expect(await settles("Grep", { pattern: "x" })).toBe("No matches found.");
    });
  });

  describe("sizes", () => {
    it("Read with a huge limit or offset on a large file of short lines holds only what a result can", async () => {
      await writeFile(join(harness.cwd, "lines.txt"), "x\n".repeat(4 * 1024 * 1024));
      const text = await settles("Read", { file_path: "lines.txt", offset: 1, limit: 1_000_000_000 });
      expect(text).toMatch(/Read on with offset \d+/);
      expect(await settles("Read", { file_path: "lines.txt", offset: 4_000_000, limit: 3 })).toContain(
        "4000000\tx",
      );
      expect(await settles("Read", { file_path: "lines.txt", offset: Number.MAX_SAFE_INTEGER })).toContain(
        "past the end",
      );
    });

    it("a sparse 64 GiB file is refused or read in part, never read whole", async () => {
      const handle = await open(join(harness.cwd, "sparse.bin"), "w");
      await handle.truncate(64 * 1024 ** 3);
      await handle.close();
      expect(await settles("Read", { file_path: "sparse.bin" })).toContain("more than");
      expect(await settles("Read", { file_path: "sparse.bin", offset: 1, limit: 5 })).toContain("binary");
      expect(await settles("Read", { file_path: "sparse.bin", offset: 10 })).toContain("binary");
      expect(await settles("Edit", { file_path: "sparse.bin", old_string: "a", new_string: "b" })).toContain(
        "more than",
      );
      expect(await settles("Grep", { pattern: "x", output_mode: "count" })).toContain("not searched");
    });

    it("Edit: an old_string of many blank lines, a long near-match and a replace_all that would explode settle", async () => {
      const path = join(harness.cwd, "big.txt");
      await writeFile(path, "a".repeat(8 * 1024 * 1024));
      expect(await settles("Read", { file_path: "big.txt", offset: 1, limit: 1 })).toContain("1\ta");
      const blank = await settles("Edit", {
        file_path: "big.txt",
        old_string: `${"\n".repeat(200_000)}x`,
        new_string: "y",
      });
      expect(blank).toContain("was not found");
      const nearMatch = await settles("Edit", {
        file_path: "big.txt",
        old_string: `${"a".repeat(64 * 1024)}b`,
        new_string: "c",
      });
      expect(nearMatch).toContain("was not found");
      const exploding = await settles("Edit", {
        file_path: "big.txt",
        old_string: "a",
        new_string: "b".repeat(1024),
        replace_all: true,
      });
      expect(exploding).toContain("more than");
    });

    it("Grep with huge context and page sizes stays bounded by the files", async () => {
      await writeFile(join(harness.cwd, "many.txt"), "needle\n".repeat(200_000));
      const text = await settles("Grep", {
        pattern: "needle",
        output_mode: "content",
        "-C": 1_000_000_000,
        head_limit: 5,
        offset: 1_000_000_000_000,
      });
      expect(text).toContain("past the last");
    });

    it("TodoWrite with a hundred thousand items settles", async () => {
      const todos = Array.from({ length: 100_000 }, (_, index) => ({
        content: `task ${index}`,
        status: "pending",
        activeForm: `doing ${index}`,
      }));
      expect(await settles("TodoWrite", { todos })).not.toBe("");
    });
  });

  describe("Bash", () => {
    it("answers a command with a NUL byte with an error result, not a thrown TypeError", async () => {
      const output = await harness.call(bash, { command: "echo a\u0000b" });
      expect(output.isError).toBe(true);
      expect(harness.text(output)).toContain("NUL byte");
      const background = await harness.call(bash, { command: "\u0000", run_in_background: true });
      expect(background.isError).toBe(true);
    });
  });
});
