import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryPathError } from "../store/memory-errors.ts";
import { formatMemoryFile } from "../store/memory-frontmatter.ts";
import { HOSTILE_MEMORY_NAMES } from "../testing/hostile-memory-names.ts";
import { createMemoryTool, type MemoryTool } from "../tool/memory-tool.ts";
import { createMemoryDir, type MemoryDir } from "./memory-dir.ts";

/** Names that must never reach outside the root, nor be created or read, through either surface. */
const HOSTILE_NAMES: string[] = [...HOSTILE_MEMORY_NAMES, "link/inside.md", "linkfile.md", "hard.md"];

/** Tool paths that are hostile before the /memories prefix is even removed. */
const HOSTILE_TOOL_PATHS = [
  "/etc/passwd",
  "/memories/../etc/passwd",
  "/memoriesX/a.md",
  "memories/a.md",
  "/MEMORIES/a.md",
  "/memories\\..\\x.md",
  "//memories/a.md",
  "/memories/%2e%2e/x.md",
  "../memories/a.md",
  "/memories/link",
];

/** Names refused by what is on disk (symlinks, hard links) rather than by their text. */
const DISK_RULE_NAMES = ["link/inside.md", "linkfile.md", "hard.md"];

const SECRET = "TOP-SECRET-OUTSIDE-THE-ROOT";

let parent: string;
let outside: string;
let dir: MemoryDir;
let tool: MemoryTool;

async function snapshot(folder: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const visit = async (current: string) => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await visit(path);
      else result[relative(folder, path)] = entry.isFile() ? await readFile(path, "utf8") : "(link)";
    }
  };
  await visit(folder);
  return result;
}

let before: Record<string, string>;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "memory-hostile-"));
  outside = join(parent, "outside");
  await mkdir(outside);
  await writeFile(join(outside, "secret.md"), `${SECRET}\n`);
  await writeFile(join(outside, "inside.md"), `${SECRET}\n`);
  await writeFile(join(outside, "hard-target.md"), `${SECRET}\n`);
  dir = await createMemoryDir({ root: join(parent, "sandbox", "memory") });
  await dir.write(
    "ok.md",
    formatMemoryFile({ name: "ok", description: "a fine memory", type: "user" }, "TOP\n"),
  );
  await symlink(outside, join(dir.root, "link"));
  await symlink(join(outside, "secret.md"), join(dir.root, "linkfile.md"));
  await link(join(outside, "hard-target.md"), join(dir.root, "hard.md"));
  tool = createMemoryTool({ store: dir });
  before = await snapshot(parent);
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe("hostile paths", () => {
  it("has at least 50 of them", () => {
    expect(HOSTILE_NAMES.length + HOSTILE_TOOL_PATHS.length).toBeGreaterThanOrEqual(50);
    expect(HOSTILE_NAMES.length).toBeGreaterThanOrEqual(50);
  });

  it.each(HOSTILE_NAMES.map((name) => [JSON.stringify(name), name]))(
    "the memory dir refuses %s with a typed error",
    async (_label, name) => {
      const content = formatMemoryFile({ name: "x", description: "x", type: "user" }, "x\n");
      for (const attempt of [
        () => dir.write(name, content),
        () => dir.read(name),
        () => dir.delete(name),
        () => dir.rename("ok.md", name),
        () => dir.rename(name, "renamed.md"),
        // Versions live in the hidden store folder; a name refused by its text alone is refused there too.
        ...(DISK_RULE_NAMES.includes(name) ? [] : [() => dir.listVersions(name)]),
      ]) {
        const error = await attempt().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, `${JSON.stringify(name)} was accepted`).toBeInstanceOf(MemoryPathError);
      }
    },
  );

  it.each(
    // "" would be "/memories/", the root itself, which is a valid path.
    [
      ...HOSTILE_NAMES.filter((name) => name !== "").map((name) => `/memories/${name}`),
      ...HOSTILE_TOOL_PATHS,
    ].map((path) => [JSON.stringify(path), path]),
  )("the memory tool answers %s with an error result and never its content", async (_label, path) => {
    const results = [
      await tool.execute({ command: "view", path }),
      await tool.execute({ command: "view", path, view_range: [1, -1] }),
      await tool.execute({ command: "create", path, file_text: "x" }),
      await tool.execute({ command: "str_replace", path, old_str: "TOP", new_str: "x" }),
      await tool.execute({ command: "insert", path, insert_line: 0, insert_text: "x" }),
      await tool.execute({ command: "delete", path }),
      await tool.execute({ command: "rename", old_path: path, new_path: "/memories/renamed.md" }),
      await tool.execute({ command: "rename", old_path: "/memories/ok.md", new_path: path }),
    ];
    for (const result of results) {
      expect(result.isError, `${JSON.stringify(path)}: ${result.content}`).toBe(true);
      expect(result.content).not.toContain(SECRET);
      expect(result.content.length).toBeGreaterThan(0);
    }
  });

  it("left everything outside the root as it was, created nothing outside it, and kept ok.md", async () => {
    const after = await snapshot(parent);
    const outsideOf = (files: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(files).filter(([path]) => !path.startsWith(join("sandbox", "memory"))),
      );
    expect(outsideOf(after)).toEqual(outsideOf(before));
    expect(await readdir(parent)).toEqual(["outside", "sandbox"]);
    expect(await readdir(join(parent, "sandbox"))).toEqual(["memory"]);
    expect((await dir.read("ok.md")).content).toContain("TOP");
    const listing = await tool.execute({ command: "view", path: "/memories" });
    expect(listing.content).not.toContain("link");
    expect(listing.content).not.toContain(SECRET);
  });
});
