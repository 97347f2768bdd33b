import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, git, type ToolHarness } from "./__fixtures__/tool-harness.ts";
import { createBuiltinTools } from "./builtin-tools.ts";

/** The tools against a real repository, changed under them by git the way a user's checkout would be. */
describe("the tools in a real git repository", () => {
  let harness: ToolHarness;
  const tools = createBuiltinTools();
  const tool = (name: string) => tools.find((each) => each.name === name)!;

  beforeEach(async () => {
    harness = await createToolHarness("unforget-git-");
    git(harness.cwd, "init", "-q", "-b", "main");
    await writeFile(join(harness.cwd, ".gitignore"), "build/\n");
    await writeFile(join(harness.cwd, "app.ts"), "export function greet() {\n  return 'hello';\n}\n");
    await writeFile(join(harness.cwd, "logo.bin"), Buffer.from([0x00, 0x01, 0x02, 0x03]));
    git(harness.cwd, "add", ".");
    git(harness.cwd, "commit", "-q", "-m", "first");
    git(harness.cwd, "checkout", "-q", "-b", "feature");
    await writeFile(join(harness.cwd, "app.ts"), "export function greet() {\n  return 'hi there';\n}\n");
    git(harness.cwd, "commit", "-q", "-am", "feature");
    git(harness.cwd, "checkout", "-q", "main");
  });
  afterEach(async () => {
    await harness.close();
  });

  it("refuses an edit after a checkout changed the file since it was read, and applies it after a new Read", async () => {
    await harness.call(tool("Read"), { file_path: "app.ts" });
    git(harness.cwd, "checkout", "-q", "feature", "--", "app.ts");
    const refused = await harness.call(tool("Edit"), {
      file_path: "app.ts",
      old_string: "'hello'",
      new_string: "'hey'",
    });
    expect(refused.isError).toBe(true);
    expect(harness.text(refused)).toContain("app.ts has changed on disk since you read it");
    expect(harness.text(await harness.call(tool("Read"), { file_path: "app.ts" }))).toContain("'hi there'");
    await harness.call(tool("Edit"), { file_path: "app.ts", old_string: "'hi there'", new_string: "'hey'" });
    expect(git(harness.cwd, "diff", "--", "app.ts")).toContain("-  return 'hi there';\n+  return 'hey';");
  });

  it("resolves a merge conflict through Read and Edit, the conflict markers being the unique old_string", async () => {
    await writeFile(join(harness.cwd, "app.ts"), "export function greet() {\n  return 'hello, world';\n}\n");
    git(harness.cwd, "commit", "-q", "-am", "main change");
    expect(() => git(harness.cwd, "merge", "-q", "feature")).toThrow();
    const conflicted = harness.text(await harness.call(tool("Read"), { file_path: "app.ts" }));
    expect(conflicted).toContain("<<<<<<< HEAD");
    const current = await readFile(join(harness.cwd, "app.ts"), "utf8");
    const markers = current.slice(
      current.indexOf("<<<<<<<"),
      current.indexOf(">>>>>>> feature") + ">>>>>>> feature".length,
    );
    const resolved = await harness.call(tool("Edit"), {
      file_path: "app.ts",
      old_string: markers,
      new_string: "  return 'hi there, world';",
    });
    expect(resolved.isError).toBe(false);
    git(harness.cwd, "add", "app.ts");
    git(harness.cwd, "commit", "-q", "-m", "merged");
    expect(await readFile(join(harness.cwd, "app.ts"), "utf8")).toBe(
      "export function greet() {\n  return 'hi there, world';\n}\n",
    );
  });

  it("keeps gitignored build output out of searches, refuses binary files, and writes what git then sees", async () => {
    await harness.call(tool("Bash"), { command: "mkdir -p build && echo \"return 'hello'\" > build/app.js" });
    expect(harness.text(await harness.call(tool("Grep"), { pattern: "hello" }))).toBe("Found 1 file\napp.ts");
    expect(harness.text(await harness.call(tool("Glob"), { pattern: "**/*.js" }))).toBe("No files found.");
    const binary = await harness.call(tool("Read"), { file_path: "logo.bin" });
    expect(harness.text(binary)).toContain("logo.bin is a binary file");
    expect(harness.text(await harness.call(tool("Grep"), { pattern: ".", path: "logo.bin" }))).toBe(
      "No matches found.\n(logo.bin is a binary file: Grep searches text. Inspect it with Bash.)",
    );
    await harness.call(tool("Write"), { file_path: "notes.md", content: "# Notes\n" });
    expect(git(harness.cwd, "status", "--porcelain")).toBe("?? notes.md\n");
  });
});
