import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryDir, type MemoryDir } from "../dir/memory-dir.ts";
import { createMemoryTool, type MemoryTool } from "./memory-tool.ts";

let parent: string;
let dir: MemoryDir;
let tool: MemoryTool;

beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), "memory-tool-"));
  dir = await createMemoryDir({ root: join(parent, "memory") });
  tool = createMemoryTool({ store: dir, author: "agent:claude" });
});

afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

const run = (input: Record<string, unknown>) => tool.execute(input);

describe("createMemoryTool", () => {
  it("is a Tool of core's contract and has the Anthropic built-in tool entry", () => {
    expect(tool.anthropicDefinition).toEqual({ type: "memory_20250818", name: "memory" });
    expect(tool.name).toBe("memory");
    expect(tool.inputSchema.required).toEqual(["command"]);
    expect([tool.readOnly, tool.concurrencySafe]).toEqual([false, false]);
    // Compaction never clears what the model recalled.
    expect(tool.resultRetention).toBe("keep");
  });

  it("views an empty store as the header and the root line", async () => {
    expect(await run({ command: "view", path: "/memories" })).toEqual({
      content:
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0.0K\t/memories",
      isError: false,
    });
  });

  it("creates, views with 6-wide line numbers and a range, and refuses to create twice", async () => {
    expect(
      await run({
        command: "create",
        path: "/memories/notes.md",
        file_text: "Hello World\nThis is line two\n",
      }),
    ).toEqual({ content: "File created successfully at: /memories/notes.md", isError: false });
    expect(await run({ command: "create", path: "/memories/notes.md", file_text: "again" })).toEqual({
      content: "Error: File /memories/notes.md already exists",
      isError: true,
    });
    expect((await run({ command: "view", path: "/memories/notes.md" })).content).toBe(
      "Here's the content of /memories/notes.md with line numbers:\n     1\tHello World\n     2\tThis is line two",
    );
    expect((await run({ command: "view", path: "/memories/notes.md", view_range: [2, -1] })).content).toBe(
      "Here's the content of /memories/notes.md with line numbers:\n     2\tThis is line two",
    );
    expect((await run({ command: "view", path: "/memories/notes.md", view_range: [3, 9] })).isError).toBe(
      true,
    );
    expect(await run({ command: "view", path: "/memories/missing.md" })).toEqual({
      content: "The path /memories/missing.md does not exist. Please provide a valid path.",
      isError: true,
    });
  });

  it("lists two levels deep with human-readable sizes and tabs, hiding the store folder", async () => {
    await run({ command: "create", path: "/memories/a.md", file_text: "x".repeat(2048) });
    await run({ command: "create", path: "/memories/topics/deep/b.md", file_text: "y" });
    const listing = (await run({ command: "view", path: "/memories" })).content.split("\n");
    expect(listing[0]).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
    );
    expect(listing).toContain("2.0K\t/memories/a.md");
    expect(listing).toContain("0.0K\t/memories/topics/deep");
    expect(listing.some((line) => line.endsWith("/memories/MEMORY.md"))).toBe(true);
    expect(listing.some((line) => line.includes("b.md"))).toBe(false);
    expect(listing.some((line) => line.includes(".unforget"))).toBe(false);
  });

  it("str_replace: edits with a numbered snippet, and reports missing and duplicate text with line numbers", async () => {
    await run({
      command: "create",
      path: "/memories/prefs.md",
      file_text: "color: blue\nsize: big\ncolor: blue\n",
    });
    expect(
      await run({ command: "str_replace", path: "/memories/prefs.md", old_str: "red", new_str: "x" }),
    ).toEqual({
      content: "No replacement was performed, old_str `red` did not appear verbatim in /memories/prefs.md.",
      isError: true,
    });
    expect(
      await run({ command: "str_replace", path: "/memories/prefs.md", old_str: "color: blue", new_str: "x" }),
    ).toEqual({
      content:
        "No replacement was performed. Multiple occurrences of old_str `color: blue` in lines: 1, 3. Please ensure it is unique",
      isError: true,
    });
    const edited = await run({
      command: "str_replace",
      path: "/memories/prefs.md",
      old_str: "size: big",
      new_str: "size: small",
    });
    expect(edited).toEqual({
      content:
        "The memory file has been edited.\n     1\tcolor: blue\n     2\tsize: small\n     3\tcolor: blue",
      isError: false,
    });
    expect(await run({ command: "str_replace", path: "/memories/nope.md", old_str: "a" })).toEqual({
      content: "Error: The path /memories/nope.md does not exist. Please provide a valid path.",
      isError: true,
    });
  });

  it("insert: after a line, at the top, and refuses a line outside the file", async () => {
    await run({ command: "create", path: "/memories/todo.md", file_text: "one\ntwo\n" });
    expect(
      await run({
        command: "insert",
        path: "/memories/todo.md",
        insert_line: 1,
        insert_text: "one and a half\n",
      }),
    ).toEqual({ content: "The file /memories/todo.md has been edited.", isError: false });
    await run({ command: "insert", path: "/memories/todo.md", insert_line: 0, insert_text: "zero" });
    expect((await dir.read("todo.md")).content).toBe("zero\none\none and a half\ntwo\n");
    expect(
      await run({ command: "insert", path: "/memories/todo.md", insert_line: 9, insert_text: "x" }),
    ).toEqual({
      content:
        "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]",
      isError: true,
    });
    expect(
      await run({ command: "insert", path: "/memories/none.md", insert_line: 0, insert_text: "x" }),
    ).toEqual({
      content: "Error: The path /memories/none.md does not exist",
      isError: true,
    });
  });

  it("delete keeps the last version; rename refuses an existing destination; the root cannot go", async () => {
    await run({ command: "create", path: "/memories/a.md", file_text: "alpha\n" });
    await run({ command: "create", path: "/memories/b.md", file_text: "beta\n" });
    expect(await run({ command: "rename", old_path: "/memories/a.md", new_path: "/memories/b.md" })).toEqual({
      content: "Error: The destination /memories/b.md already exists",
      isError: true,
    });
    expect(
      await run({ command: "rename", old_path: "/memories/a.md", new_path: "/memories/archive/a.md" }),
    ).toEqual({
      content: "Successfully renamed /memories/a.md to /memories/archive/a.md",
      isError: false,
    });
    expect(await run({ command: "delete", path: "/memories/archive/a.md" })).toEqual({
      content: "Successfully deleted /memories/archive/a.md",
      isError: false,
    });
    const versions = await dir.listVersions("archive/a.md");
    expect(versions[0]).toMatchObject({ operation: "delete", content: "alpha\n", author: "agent:claude" });
    expect(await run({ command: "delete", path: "/memories/archive/a.md" })).toEqual({
      content: "Error: The path /memories/archive/a.md does not exist",
      isError: true,
    });
    expect((await run({ command: "delete", path: "/memories" })).isError).toBe(true);
    expect((await run({ command: "rename", old_path: "/memories", new_path: "/memories/x" })).isError).toBe(
      true,
    );
  });

  it("deletes and renames whole folders, file by file", async () => {
    await run({ command: "create", path: "/memories/t/a.md", file_text: "a" });
    await run({ command: "create", path: "/memories/t/b.md", file_text: "b" });
    expect((await run({ command: "rename", old_path: "/memories/t", new_path: "/memories/u" })).isError).toBe(
      false,
    );
    expect((await dir.list()).map((entry) => entry.name)).toEqual(["u/a.md", "u/b.md"]);
    expect((await run({ command: "delete", path: "/memories/u/" })).content).toBe(
      "Successfully deleted /memories/u/",
    );
    expect(await dir.list()).toEqual([]);
  });

  it("never throws: bad input is an error result", async () => {
    for (const input of [
      undefined,
      null,
      42,
      "view",
      {},
      { command: "explode" },
      { command: "view" },
      { command: "create", path: "/memories/a.md" },
    ]) {
      const result = await tool.execute(input as Record<string, unknown>);
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Error: /);
    }
  });

  it("returns the frontmatter error of a bad create instead of writing it", async () => {
    const result = await run({ command: "create", path: "/memories/a.md", file_text: "---\nname: [\n---\n" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/frontmatter is not valid YAML/);
    expect(await dir.list()).toEqual([]);
  });
});
