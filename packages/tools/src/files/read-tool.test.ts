import { execFileSync } from "node:child_process";
import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { forgetReadContents, readFilesOf } from "./read-state.ts";
import { createReadTool } from "./read-tool.ts";

// A 2×3 PNG (red pixels), small enough to keep inline.
const PNG_2X3 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEUlEQVR4nGP4z8DwnwGMERQARNAF+7BYSawAAAAASUVORK5CYII=",
  "base64",
);

describe("Read", () => {
  let harness: ToolHarness;
  const read = createReadTool({ now: () => 1_000 });

  beforeEach(async () => {
    harness = await createToolHarness();
  });
  afterEach(async () => {
    await harness.close();
  });

  const lines = (count: number) =>
    Array.from({ length: count }, (_, index) => `line ${index + 1}`).join("\n");

  it("numbers lines like cat -n and reads a range with offset and limit, saying how to read on", async () => {
    await writeFile(join(harness.cwd, "a.txt"), `${lines(10)}\n`);
    const whole = await harness.call(read, { file_path: "a.txt" });
    expect(whole.isError).toBe(false);
    expect(harness.text(whole).split("\n").slice(0, 2)).toEqual(["     1\tline 1", "     2\tline 2"]);
    expect(harness.text(whole)).not.toContain("Read on");

    const part = await harness.call(read, { file_path: join(harness.cwd, "a.txt"), offset: 4, limit: 3 });
    expect(harness.text(part)).toBe(
      "     4\tline 4\n     5\tline 5\n     6\tline 6\n\n(Lines 4–6 of 10. Read on with offset 7.)",
    );
    const past = await harness.call(read, { file_path: "a.txt", offset: 11 });
    expect(past).toEqual({
      content: "offset 11 is past the end of a.txt, which has 10 lines.",
      isError: true,
    });
  });

  it("answers an unchanged re-read with a stub once, and with the content after a change or a compaction", async () => {
    const path = join(harness.cwd, "a.txt");
    await writeFile(path, "one\ntwo\n");
    expect(harness.text(await harness.call(read, { file_path: "a.txt" }))).toContain("one");
    const stub = harness.text(await harness.call(read, { file_path: "a.txt" }));
    expect(stub).toContain("has not changed since you last read it");
    // Asked again right after the stub: the model wants the content.
    expect(harness.text(await harness.call(read, { file_path: "a.txt" }))).toContain("     1\tone");
    expect(harness.text(await harness.call(read, { file_path: "a.txt" }))).toContain("has not changed");

    // Another range is not the same read.
    expect(harness.text(await harness.call(read, { file_path: "a.txt", offset: 2 }))).toContain(
      "     2\ttwo",
    );

    await writeFile(path, "one\nTWO\n");
    await utimes(path, new Date(), new Date(Date.now() + 5_000));
    expect(harness.text(await harness.call(read, { file_path: "a.txt", offset: 2 }))).toContain("TWO");

    expect(harness.text(await harness.call(read, { file_path: "a.txt", offset: 2 }))).toContain(
      "has not changed",
    );
    forgetReadContents(harness.state);
    expect(harness.text(await harness.call(read, { file_path: "a.txt", offset: 2 }))).toContain("TWO");
  });

  it("keeps a read state of real paths, most recent first, with the whole file's hash", async () => {
    await mkdir(join(harness.cwd, "src"));
    await writeFile(join(harness.cwd, "src", "b.ts"), "b\n");
    await writeFile(join(harness.cwd, "a.txt"), "a\n");
    await symlink(join(harness.cwd, "src", "b.ts"), join(harness.cwd, "alias.ts"));
    await harness.call(read, { file_path: "a.txt" });
    await harness.call(read, { file_path: "alias.ts" });
    const records = readFilesOf(harness.state);
    expect(records.map((record) => record.path)).toEqual([
      join(harness.cwd, "src", "b.ts"),
      join(harness.cwd, "a.txt"),
    ]);
    expect(records[0]).toMatchObject({ kind: "text", readAt: 1_000, size: 2 });
    expect(records[0]?.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a whole read over the size cap with how to read the rest, and reads it in parts", async () => {
    const small = createReadTool({ maxFileBytes: 1_000 });
    await writeFile(join(harness.cwd, "big.txt"), `${lines(500)}\n`);
    const refused = await harness.call(small, { file_path: "big.txt" });
    expect(refused.isError).toBe(true);
    expect(harness.text(refused)).toMatch(
      /big\.txt is 4\.\d KiB, more than the 1000 B a Read returns whole\. Read it in parts with offset and limit/,
    );
    const part = await harness.call(small, { file_path: "big.txt", offset: 499, limit: 5 });
    expect(harness.text(part)).toBe("   499\tline 499\n   500\tline 500");
  });

  it("cuts long lines and ranges over the token budget, saying where to go on", async () => {
    await writeFile(join(harness.cwd, "long.txt"), `${"x".repeat(2_500)}\nshort\n`);
    const cut = harness.text(await harness.call(read, { file_path: "long.txt" }));
    expect(cut).toContain("… [500 more characters]");
    const tight = createReadTool({ maxOutputTokens: 60 });
    await writeFile(join(harness.cwd, "many.txt"), `${lines(200)}\n`);
    const text = harness.text(await harness.call(tight, { file_path: "many.txt" }));
    expect(text).toMatch(
      /\(Lines 1–\d+ of 200: the rest of the range does not fit in one result of ~60 tokens\. Read on with offset \d+\.\)/,
    );
  });

  it("returns images as image blocks with their size", async () => {
    await writeFile(join(harness.cwd, "pixel.png"), PNG_2X3);
    const output = await harness.call(read, { file_path: "pixel.png" });
    expect(output.isError).toBe(false);
    expect(output.content).toEqual([
      { type: "text", text: "Image pixel.png (2×3, 74 B):" },
      {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: PNG_2X3.toString("base64") },
        width: 2,
        height: 3,
      },
    ]);
    expect(readFilesOf(harness.state)[0]?.kind).toBe("image");
    await writeFile(join(harness.cwd, "other.png"), PNG_2X3);
    const tooBig = createReadTool({ maxImageBytes: 10 });
    expect(harness.text(await harness.call(tooBig, { file_path: "other.png" }))).toContain(
      "Make a smaller copy",
    );
  });

  it("refuses binary files, directories, FIFOs and devices without blocking", async () => {
    await writeFile(join(harness.cwd, "blob.bin"), Buffer.from([0x7f, 0x45, 0x00, 0x01, 0x02]));
    const binary = await harness.call(read, { file_path: "blob.bin" });
    expect(binary.isError).toBe(true);
    expect(harness.text(binary)).toContain(
      "blob.bin is a binary file (it contains NUL bytes); Read returns text and images only",
    );
    await mkdir(join(harness.cwd, "folder"));
    expect(harness.text(await harness.call(read, { file_path: "folder" }))).toContain("is a directory");
    execFileSync("mkfifo", [join(harness.cwd, "pipe")]);
    const fifo = await harness.call(read, { file_path: "pipe" });
    expect(fifo).toEqual({
      content:
        "pipe is a named pipe (FIFO): reading it could wait forever, so the file tools do not open it.",
      isError: true,
    });
    const devices = createReadTool({ additionalDirectories: ["/dev"] });
    expect(harness.text(await harness.call(devices, { file_path: "/dev/zero" }))).toContain("is a device");
  });

  it("reads UTF-16 and Latin-1 files, and CRLF files without the carriage returns", async () => {
    await writeFile(
      join(harness.cwd, "wide.txt"),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\n", "utf16le")]),
    );
    expect(harness.text(await harness.call(read, { file_path: "wide.txt" }))).toBe("     1\théllo");
    await writeFile(join(harness.cwd, "latin.txt"), Buffer.from("caf\xe9\n", "latin1"));
    expect(harness.text(await harness.call(read, { file_path: "latin.txt" }))).toBe("     1\tcafé");
    await writeFile(join(harness.cwd, "dos.txt"), "a\r\nb\r\n");
    expect(harness.text(await harness.call(read, { file_path: "dos.txt" }))).toBe("     1\ta\n     2\tb");
  });

  it("refuses paths outside the working directory, and says when a file does not exist", async () => {
    const outside = await harness.call(read, { file_path: "../../etc/passwd" });
    expect(outside.isError).toBe(true);
    expect(harness.text(outside)).toContain("is outside the folders this session may use");
    await symlink("/etc/hostname", join(harness.cwd, "leaf"));
    expect(harness.text(await harness.call(read, { file_path: "leaf" }))).toContain(
      "through a symbolic link",
    );
    expect(await harness.call(read, { file_path: "missing.txt" })).toEqual({
      content: `missing.txt does not exist (the working directory is ${harness.cwd}).`,
      isError: true,
    });
  });

  it("tells rules what it reads", () => {
    expect(read.permissionSubject?.({ file_path: "src/a.ts" }, { cwd: "/repo" })).toEqual({
      kind: "path",
      path: "/repo/src/a.ts",
      access: "read",
    });
    expect(read.readOnly && read.concurrencySafe).toBe(true);
  });
});
