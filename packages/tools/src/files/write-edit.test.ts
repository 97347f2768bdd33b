import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { allowDirectories } from "../paths/session-directories.ts";
import { createEditTool } from "./edit-tool.ts";
import { readFilesOf } from "./read-state.ts";
import { createReadTool } from "./read-tool.ts";
import { createWriteTool } from "./write-tool.ts";

describe("Write and Edit", () => {
  let harness: ToolHarness;
  const read = createReadTool();
  const write = createWriteTool();
  const edit = createEditTool();

  beforeEach(async () => {
    harness = await createToolHarness();
  });
  afterEach(async () => {
    await harness.close();
  });

  const file = (name: string) => join(harness.cwd, name);

  it("creates a new file without a Read, and refuses to replace one that was not read", async () => {
    expect(await harness.call(write, { file_path: "new/dir/a.txt", content: "one\ntwo\n" })).toEqual({
      content: "Created new/dir/a.txt (2 lines).",
      isError: false,
    });
    await writeFile(file("b.txt"), "theirs\n");
    const refused = await harness.call(write, { file_path: "b.txt", content: "mine\n" });
    expect(refused.isError).toBe(true);
    expect(harness.text(refused)).toBe(
      "b.txt has not been read in this session. Read it first, then write it: the tools only change files whose current content you have seen.",
    );
    expect(
      harness.text(await harness.call(edit, { file_path: "b.txt", old_string: "theirs", new_string: "x" })),
    ).toContain("has not been read in this session");
    expect(await readFile(file("b.txt"), "utf8")).toBe("theirs\n");
  });

  it("refuses a change to a file that changed on disk since it was read, and allows it after a new Read", async () => {
    await writeFile(file("a.txt"), "alpha\n");
    await harness.call(read, { file_path: "a.txt" });
    await writeFile(file("a.txt"), "bravo\n");
    await utimes(file("a.txt"), new Date(), new Date(Date.now() + 10_000));
    const refused = await harness.call(edit, {
      file_path: "a.txt",
      old_string: "bravo",
      new_string: "charlie",
    });
    expect(harness.text(refused)).toBe(
      "a.txt has changed on disk since you read it (by the user, a formatter or a command). Read it again and make your change on its current content.",
    );
    await harness.call(read, { file_path: "a.txt" });
    expect(
      (await harness.call(edit, { file_path: "a.txt", old_string: "bravo", new_string: "charlie" })).isError,
    ).toBe(false);
    expect(await readFile(file("a.txt"), "utf8")).toBe("charlie\n");
  });

  it("accepts a file whose time moved but whose bytes did not (a touch)", async () => {
    await writeFile(file("a.txt"), "same\n");
    await harness.call(read, { file_path: "a.txt" });
    await utimes(file("a.txt"), new Date(), new Date(Date.now() + 10_000));
    expect((await harness.call(write, { file_path: "a.txt", content: "new\n" })).isError).toBe(false);
  });

  it("chains edits without new Reads, since each change is recorded", async () => {
    await writeFile(file("a.ts"), "let a = 1;\nlet b = 2;\n");
    await harness.call(read, { file_path: "a.ts" });
    const first = await harness.call(edit, { file_path: "a.ts", old_string: "a = 1", new_string: "a = 10" });
    expect(harness.text(first)).toBe(
      "Edited a.ts. The changed lines now read:\n     1\tlet a = 10;\n     2\tlet b = 2;",
    );
    expect(
      (await harness.call(edit, { file_path: "a.ts", old_string: "b = 2", new_string: "b = 20" })).isError,
    ).toBe(false);
    expect(await readFile(file("a.ts"), "utf8")).toBe("let a = 10;\nlet b = 20;\n");
    // The model knows its change, not the whole file: the next Read returns the content, not a stub.
    expect(harness.text(await harness.call(read, { file_path: "a.ts" }))).toContain("let b = 20;");
  });

  it("needs a unique old_string unless replace_all, naming the lines where it occurs", async () => {
    await writeFile(file("a.ts"), "x = 1\ny = 2\nx = 1\n");
    await harness.call(read, { file_path: "a.ts" });
    const ambiguous = await harness.call(edit, {
      file_path: "a.ts",
      old_string: "x = 1",
      new_string: "x = 3",
    });
    expect(ambiguous).toEqual({
      content:
        "old_string occurs 2 times in a.ts (at lines 1, 3). Include more surrounding lines so that it matches only once, or set replace_all to true to change every occurrence.",
      isError: true,
    });
    const all = await harness.call(edit, {
      file_path: "a.ts",
      old_string: "x = 1",
      new_string: "x = 3",
      replace_all: true,
    });
    expect(harness.text(all)).toBe("Edited a.ts: replaced 2 occurrences.");
    expect(await readFile(file("a.ts"), "utf8")).toBe("x = 3\ny = 2\nx = 3\n");
  });

  it("says what went wrong when old_string is missing, empty or unchanged", async () => {
    await writeFile(file("a.ts"), "const a = 1;\n");
    await harness.call(read, { file_path: "a.ts" });
    expect(
      harness.text(await harness.call(edit, { file_path: "a.ts", old_string: "const b", new_string: "x" })),
    ).toContain("old_string was not found in a.ts. Read the file again");
    expect(
      harness.text(
        await harness.call(edit, { file_path: "a.ts", old_string: "     1\tconst a", new_string: "x" }),
      ),
    ).toContain("line-number prefixes Read shows");
    expect(
      harness.text(await harness.call(edit, { file_path: "a.ts", old_string: "", new_string: "x" })),
    ).toContain("old_string is empty but a.ts already has content");
    expect(
      harness.text(await harness.call(edit, { file_path: "a.ts", old_string: "a", new_string: "a" })),
    ).toContain("nothing to change");
    expect(
      await harness.call(edit, { file_path: "fresh.ts", old_string: "", new_string: "export {};\n" }),
    ).toEqual({
      content: "Created fresh.ts.",
      isError: false,
    });
  });

  it("inserts replacement text literally ($& and $1 are not patterns)", async () => {
    await writeFile(file("a.txt"), "price\n");
    await harness.call(read, { file_path: "a.txt" });
    await harness.call(edit, { file_path: "a.txt", old_string: "price", new_string: "$& costs $1" });
    expect(await readFile(file("a.txt"), "utf8")).toBe("$& costs $1\n");
  });

  it("keeps CRLF line endings, a UTF-8 BOM, UTF-16 and Latin-1 encodings and the file mode", async () => {
    await writeFile(file("dos.txt"), "\ufeffone\r\ntwo\r\nthree\r\n");
    await chmod(file("dos.txt"), 0o755);
    await harness.call(read, { file_path: "dos.txt" });
    await harness.call(edit, { file_path: "dos.txt", old_string: "one\ntwo", new_string: "uno\ndos\nmás" });
    expect(await readFile(file("dos.txt"), "utf8")).toBe("\ufeffuno\r\ndos\r\nmás\r\nthree\r\n");
    expect((await stat(file("dos.txt"))).mode & 0o777).toBe(0o755);
    await harness.call(write, { file_path: "dos.txt", content: "a\nb\n" });
    expect(await readFile(file("dos.txt"), "utf8")).toBe("\ufeffa\r\nb\r\n");

    const wide = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello wide\n", "utf16le")]);
    await writeFile(file("wide.txt"), wide);
    await harness.call(read, { file_path: "wide.txt" });
    await harness.call(edit, { file_path: "wide.txt", old_string: "wide", new_string: "narrow" });
    expect(await readFile(file("wide.txt"))).toEqual(
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello narrow\n", "utf16le")]),
    );

    await writeFile(file("latin.txt"), Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
    await harness.call(read, { file_path: "latin.txt" });
    await harness.call(edit, { file_path: "latin.txt", old_string: "crème", new_string: "brûlée" });
    expect(await readFile(file("latin.txt"))).toEqual(Buffer.from("caf\xe9 br\xfbl\xe9e\n", "latin1"));
    const unencodable = await harness.call(edit, {
      file_path: "latin.txt",
      old_string: "café",
      new_string: "咖啡",
    });
    expect(harness.text(unencodable)).toContain(
      "cannot be written in it without changing the file's encoding",
    );
  });

  it("writes through a symlink inside the working directory to its target, and refuses one that leads out", async () => {
    await mkdir(file("src"));
    await writeFile(file("src/real.ts"), "old\n");
    await symlink(file("src/real.ts"), file("link.ts"));
    await harness.call(read, { file_path: "link.ts" });
    await harness.call(edit, { file_path: "link.ts", old_string: "old", new_string: "new" });
    expect(await readFile(file("src/real.ts"), "utf8")).toBe("new\n");
    expect((await stat(file("link.ts"))).isFile()).toBe(true);
    await symlink("/tmp/unforget-outside-target.txt", file("out.ts"));
    const refused = await harness.call(write, { file_path: "out.ts", content: "x" });
    expect(harness.text(refused)).toContain("is outside the folders this session may use");
    expect(readFilesOf(harness.state).map((record) => record.path)).toEqual([file("src/real.ts")]);
  });

  it("refuses read-only folders and binary files", async () => {
    await mkdir(file("results"));
    const guarded = createWriteTool({ readOnlyDirectories: ["results"] });
    expect(harness.text(await harness.call(guarded, { file_path: "results/x.txt", content: "x" }))).toContain(
      "which this session may read but not change",
    );
    await writeFile(file("blob.bin"), Buffer.from([1, 0, 2]));
    expect(
      harness.text(await harness.call(edit, { file_path: "blob.bin", old_string: "a", new_string: "b" })),
    ).toContain("has not been read in this session");
  });

  it("uses a folder granted during the session, and only from then on", async () => {
    const granted = await mkdtemp(join(tmpdir(), "unforget-granted-"));
    try {
      const target = join(granted, "note.txt");
      expect(harness.text(await harness.call(write, { file_path: target, content: "x\n" }))).toContain(
        "is outside",
      );
      allowDirectories(harness.state, [granted]);
      expect(await harness.call(write, { file_path: target, content: "x\n" })).toMatchObject({
        isError: false,
      });
      expect(harness.text(await harness.call(read, { file_path: target }))).toBe("     1\tx");
    } finally {
      await rm(granted, { recursive: true, force: true });
    }
  });

  it("tells rules what it writes", () => {
    expect(edit.permissionSubject?.({ file_path: "docs/a.md" }, { cwd: "/repo" })).toEqual({
      kind: "path",
      path: "/repo/docs/a.md",
      access: "write",
    });
    expect(write.readOnly).toBe(false);
    expect(edit.concurrencySafe).toBe(false);
  });
});
