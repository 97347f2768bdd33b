import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, git, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { createGlobTool } from "./glob-tool.ts";
import { createGrepTool } from "./grep-tool.ts";

describe("Glob and Grep in a git repository", () => {
  let harness: ToolHarness;
  const glob = createGlobTool();
  const grep = createGrepTool();

  async function put(path: string, content: string | Buffer, mtimeSeconds?: number): Promise<void> {
    const full = join(harness.cwd, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
    if (mtimeSeconds !== undefined) await utimes(full, mtimeSeconds, mtimeSeconds);
  }

  beforeEach(async () => {
    harness = await createToolHarness("unforget-search-");
    git(harness.cwd, "init", "-q");
    await put(".gitignore", "dist/\n*.log\n!keep.log\n");
    await put("src/a.ts", "export const alpha = 1;\n// TODO: alpha\n", 1_000);
    await put("src/b.ts", "export const beta = 2;\n", 3_000);
    await put("src/c.js", "const gamma = 3; // TODO gamma\n", 2_000);
    await put("src/nested/.gitignore", "generated.ts\n");
    await put("src/nested/generated.ts", "export const generatedTodo = 'TODO';\n");
    await put("src/nested/kept.ts", "// TODO nested\n");
    await put("dist/bundle.js", "// TODO in the bundle\n");
    await put("debug.log", "TODO in a log\n");
    await put("keep.log", "TODO kept log\n");
    await put("node_modules/pkg/index.js", "// TODO dependency\n");
    await put("image.bin", Buffer.from([0x89, 0x50, 0x00, 0x54, 0x4f, 0x44, 0x4f]));
    await put(".github/workflows/ci.yml", "# TODO ci\n");
  });
  afterEach(async () => {
    await harness.close();
  });

  it("Glob lists matching files newest first, without gitignored files, node_modules or .git", async () => {
    expect(harness.text(await harness.call(glob, { pattern: "src/*.ts" }))).toBe("src/b.ts\nsrc/a.ts");
    const all = harness.text(await harness.call(glob, { pattern: "**/*" })).split("\n");
    expect(all).toEqual(
      expect.arrayContaining(["src/nested/kept.ts", "keep.log", ".github/workflows/ci.yml", ".gitignore"]),
    );
    for (const hidden of [
      "dist/bundle.js",
      "debug.log",
      "src/nested/generated.ts",
      "node_modules/pkg/index.js",
    ]) {
      expect(all).not.toContain(hidden);
    }
    expect(all.some((path) => path.startsWith(".git/"))).toBe(false);
    expect(harness.text(await harness.call(glob, { pattern: "**/*.ts", path: "src/nested" }))).toBe(
      "src/nested/kept.ts",
    );
  });

  it("Glob searches an ignored folder the model names, and caps results with N more", async () => {
    expect(harness.text(await harness.call(glob, { pattern: "dist/**/*.js" }))).toBe("dist/bundle.js");
    const capped = createGlobTool({ maxResults: 2 });
    expect(harness.text(await harness.call(capped, { pattern: "src/*" }))).toBe(
      "src/b.ts\nsrc/c.js\n… 1 more file (narrow the pattern or the path to see them).",
    );
    expect(harness.text(await harness.call(glob, { pattern: "**/*.rs" }))).toBe("No files found.");
    expect(harness.text(await harness.call(glob, { pattern: "../*" }))).toContain('may not contain ".."');
  });

  it("Grep lists files with matches, skipping gitignored, binary and dependency files", async () => {
    const output = harness.text(await harness.call(grep, { pattern: "TODO" }));
    const [header, ...files] = output.split("\n");
    expect(header).toBe("Found 5 files");
    expect(files.sort()).toEqual([
      ".github/workflows/ci.yml",
      "keep.log",
      "src/a.ts",
      "src/c.js",
      "src/nested/kept.ts",
    ]);
    // A file named explicitly is searched even when ignored.
    expect(harness.text(await harness.call(grep, { pattern: "TODO", path: "dist/bundle.js" }))).toBe(
      "Found 1 file\ndist/bundle.js",
    );
  });

  it("Grep shows matching lines with numbers and context, filters by glob and type, and counts", async () => {
    expect(
      harness.text(await harness.call(grep, { pattern: "TODO", output_mode: "content", glob: "*.ts" })),
    ).toBe("src/a.ts:2:// TODO: alpha\nsrc/nested/kept.ts:1:// TODO nested");
    expect(
      harness.text(
        await harness.call(grep, { pattern: "todo: ALPHA", "-i": true, output_mode: "content", "-B": 1 }),
      ),
    ).toBe("src/a.ts-1-export const alpha = 1;\nsrc/a.ts:2:// TODO: alpha");
    expect(
      harness.text(
        await harness.call(grep, { pattern: "const", type: "js", output_mode: "content", "-n": false }),
      ),
    ).toBe("src/c.js:const gamma = 3; // TODO gamma");
    expect(
      harness.text(await harness.call(grep, { pattern: "a", output_mode: "count", glob: "src/*.ts" })),
    ).toBe("src/a.ts:2\nsrc/b.ts:1\n(3 matching lines in 2 files.)");
    expect(harness.text(await harness.call(grep, { pattern: "x", type: "cobol" }))).toContain(
      'unknown file type "cobol"',
    );
  });

  it("Grep pages long results with head_limit and offset, saying how many more there are", async () => {
    await put("many.txt", Array.from({ length: 30 }, (_, index) => `match ${index + 1}`).join("\n"));
    const first = harness.text(
      await harness.call(grep, {
        pattern: "^match",
        output_mode: "content",
        head_limit: 3,
        path: "many.txt",
      }),
    );
    expect(first).toBe(
      "many.txt:1:match 1\nmany.txt:2:match 2\nmany.txt:3:match 3\n… more: 30 matching lines in 1 file in all (pass offset 3 to see the next ones, or narrow the pattern, path or glob).",
    );
    const next = harness.text(
      await harness.call(grep, {
        pattern: "^match",
        output_mode: "content",
        head_limit: 2,
        offset: 28,
        path: "many.txt",
      }),
    );
    expect(next).toBe("many.txt:29:match 29\nmany.txt:30:match 30");
  });

  it("Grep matches across lines in multiline mode only, and matches lines on their own otherwise", async () => {
    await put("pair.txt", "open {\n  body\n}\n");
    expect(harness.text(await harness.call(grep, { pattern: "\\{\\s+body", path: "pair.txt" }))).toBe(
      "No matches found.",
    );
    expect(
      harness.text(
        await harness.call(grep, {
          pattern: "\\{\\s+body",
          path: "pair.txt",
          multiline: true,
          output_mode: "content",
        }),
      ),
    ).toBe("pair.txt:1:open {\npair.txt:2:  body");
    expect(harness.text(await harness.call(grep, { pattern: "(?i)OPEN", path: "pair.txt" }))).toBe(
      "Found 1 file\npair.txt",
    );
  });

  it("Grep refuses an invalid expression with what to do, and never follows a symlink out", async () => {
    expect(harness.text(await harness.call(grep, { pattern: "foo(" }))).toContain(
      "is not a valid regular expression",
    );
    await symlink("/etc", join(harness.cwd, "etc-link"));
    expect(harness.text(await harness.call(grep, { pattern: "root", glob: "etc-link/**" }))).toBe(
      "No matches found.",
    );
    expect(harness.text(await harness.call(grep, { pattern: "root", path: "etc-link/passwd" }))).toContain(
      "is outside the folders this session may use",
    );
  });

  it("Grep stops a runaway expression at its timeout and stays responsive", async () => {
    await put("evil.txt", `${"a".repeat(40)}!\n`);
    const quick = createGrepTool({ timeoutMs: 300 });
    const ticks: number[] = [];
    const ticker = setInterval(() => ticks.push(1), 20);
    const output = await harness.call(quick, { pattern: "^(a+)+$", path: "evil.txt" });
    clearInterval(ticker);
    expect(harness.text(output)).toBe(
      "No matches found.\n(The search was stopped after 0.3 s, so these results are incomplete: narrow the path or glob, or simplify the pattern.)",
    );
    // The main thread kept running while the worker backtracked.
    expect(ticks.length).toBeGreaterThan(0);
  });
});
