import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalPath, confinePath, isPathInside, UnsafePathError } from "./confine-path.ts";

describe("confinePath", () => {
  let top: string;
  let work: string;
  let outside: string;

  beforeEach(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), "unforget-confine-")));
    work = join(top, "work");
    outside = join(top, "outside");
    await mkdir(join(work, "src"), { recursive: true });
    await mkdir(outside);
    await writeFile(join(work, "src", "a.ts"), "a");
    await writeFile(join(outside, "secret.txt"), "secret");
  });

  afterEach(async () => {
    await rm(top, { recursive: true, force: true });
  });

  const confine = (path: string, roots = [work]) => confinePath(path, { base: work, roots });
  const refusal = async (path: string, roots = [work]) => {
    const error = await confine(path, roots).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnsafePathError);
    return error as UnsafePathError;
  };

  it("resolves relative and absolute paths inside the roots, files that do not exist yet too", async () => {
    expect(await confine("src/a.ts")).toEqual({ path: join(work, "src", "a.ts"), root: work });
    expect((await confine(join(work, "src", "a.ts"))).path).toBe(join(work, "src", "a.ts"));
    expect((await confine("new/deeper/file.ts")).path).toBe(join(work, "new", "deeper", "file.ts"));
    expect((await confine(".")).path).toBe(work);
    expect((await confine("src/../src/a.ts")).path).toBe(join(work, "src", "a.ts"));
  });

  it("refuses .., absolute paths elsewhere and the home folder", async () => {
    expect((await refusal("../outside/secret.txt")).rule).toBe("outside");
    expect((await refusal("src/../../outside/secret.txt")).rule).toBe("outside");
    expect((await refusal(join(outside, "secret.txt"))).rule).toBe("outside");
    expect((await refusal("/etc/passwd")).message).toContain("outside the folders this session may use");
    expect((await refusal("~/.ssh/id_rsa")).rule).toBe("outside");
  });

  it("refuses symlinks that lead out, as a folder on the way and as the last component, dangling or not", async () => {
    await symlink(outside, join(work, "link-dir"));
    await symlink(join(outside, "secret.txt"), join(work, "leaf"));
    await symlink(join(outside, "not-yet.txt"), join(work, "dangling"));
    expect((await refusal("link-dir/secret.txt")).message).toContain("through a symbolic link");
    expect((await refusal("leaf")).rule).toBe("outside");
    expect((await refusal("dangling")).rule).toBe("outside");
    expect((await refusal("link-dir/new.txt")).rule).toBe("outside");
  });

  it("follows symlinks that stay inside, and accepts an extra root", async () => {
    await symlink(join(work, "src"), join(work, "alias"));
    expect((await confine("alias/a.ts")).path).toBe(join(work, "src", "a.ts"));
    expect(await confine(join(outside, "secret.txt"), [work, outside])).toEqual({
      path: join(outside, "secret.txt"),
      root: outside,
    });
  });

  it("refuses NUL bytes, percent-encoded dots and slashes, and symlink loops", async () => {
    expect((await refusal("src/a.ts\u0000.png")).rule).toBe("nul");
    expect((await refusal("%2e%2e/outside/secret.txt")).rule).toBe("encoded");
    expect((await refusal("src%2fa.ts")).rule).toBe("encoded");
    await symlink(join(work, "loop-b"), join(work, "loop-a"));
    await symlink(join(work, "loop-a"), join(work, "loop-b"));
    expect((await refusal("loop-a/file")).rule).toBe("loop");
  });

  it("canonicalPath follows a dangling symlink and keeps the missing tail", async () => {
    await symlink(join(outside, "later", "x"), join(work, "dangling"));
    expect(await canonicalPath(join(work, "dangling", "y.txt"))).toBe(join(outside, "later", "x", "y.txt"));
    expect(isPathInside(work, join(work, "a"))).toBe(true);
    expect(isPathInside(work, `${work}-sibling`)).toBe(false);
  });
});
