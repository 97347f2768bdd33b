import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "./write-file-atomic.ts";

describe("writeFileAtomic", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-atomic-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("replaces a file whole, creates folders and leaves no temporary file behind", async () => {
    const path = join(dir, "a", "b", "notes.md");
    await writeFileAtomic(path, "first");
    await writeFileAtomic(path, new TextEncoder().encode("second"));
    expect(await readFile(path, "utf8")).toBe("second");
    expect(await readdir(join(dir, "a", "b"))).toEqual(["notes.md"]);
  });

  it("keeps the temporary file in the given folder and never touches the target when the write fails", async () => {
    const path = join(dir, "store", "memory.md");
    await writeFileAtomic(path, "kept");
    await writeFile(join(dir, "not-a-folder"), "x");
    await expect(
      writeFileAtomic(path, "lost", { tempDir: join(dir, "not-a-folder", "tmp") }),
    ).rejects.toThrow();
    expect(await readFile(path, "utf8")).toBe("kept");
    await writeFileAtomic(path, "new", { tempDir: join(dir, "tmp") });
    expect(await readdir(join(dir, "store"))).toEqual(["memory.md"]);
    expect(await readdir(join(dir, "tmp"))).toEqual([]);
  });
});
