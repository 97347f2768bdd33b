import { mkdir, mkdtemp, open, readFile, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { confinePath, UnsafePathError } from "./confine-path.ts";
import { anchorFolder, checkOpenedPath } from "./opened-path.ts";

describe("what was opened is checked against what was confined", () => {
  let root: string;
  let outside: string;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), "unforget-opened-")));
    outside = await realpath(await mkdtemp(join(tmpdir(), "unforget-opened-outside-")));
    await mkdir(join(root, "sub"));
    await mkdir(join(outside, "sub"));
    await writeFile(join(root, "sub", "file.txt"), "inside");
    await writeFile(join(outside, "sub", "file.txt"), "outside");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  /** The race, made deterministic: the folder is swapped for a symlink after the check, before the open. */
  async function swap(): Promise<void> {
    await rename(join(root, "sub"), join(root, "sub.real"));
    await symlink(join(outside, "sub"), join(root, "sub"));
  }

  it("accepts the file it confined, and refuses the one a swapped folder leads to", async () => {
    const { path } = await confinePath("sub/file.txt", { base: root, roots: [root] });
    const unchanged = await open(path, "r");
    await expect(checkOpenedPath(unchanged.fd, path)).resolves.toBeUndefined();
    await unchanged.close();

    await swap();
    const swapped = await open(path, "r");
    try {
      const refusal = await checkOpenedPath(swapped.fd, path).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(UnsafePathError);
      expect((refusal as UnsafePathError).rule).toBe("swapped");
      expect((refusal as UnsafePathError).message).toContain(join(outside, "sub", "file.txt"));
    } finally {
      await swapped.close();
    }
  });

  // Elsewhere the anchor is the folder's path (see anchorFolder): only Linux names the opened folder itself.
  if (process.platform !== "linux") {
    console.info(`Skipped on ${process.platform}: anchoring an opened folder is checked on Linux only.`);
  }
  it.runIf(process.platform === "linux")(
    "anchors a folder so that names under it are found in that folder, and refuses a swapped one",
    async () => {
      const folder = join(root, "sub");
      const anchored = await anchorFolder(folder);
      try {
        await swap();
        // The folder was moved aside after it was opened: the anchor still names it, not the symlink's target.
        expect(await readFile(join(anchored.path, "file.txt"), "utf8")).toBe("inside");
        await writeFile(join(anchored.path, "new.txt"), "x");
        expect(await readFile(join(root, "sub.real", "new.txt"), "utf8")).toBe("x");
      } finally {
        await anchored.close();
      }
      const refusal = await anchorFolder(folder).catch((error: unknown) => error);
      expect((refusal as UnsafePathError).rule).toBe("swapped");
    },
  );
});
