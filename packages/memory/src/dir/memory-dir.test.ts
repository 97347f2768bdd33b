import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prefilterCatalogText } from "../retrieve/memory-prefilter.ts";
import { hashContent } from "../store/content-hash.ts";
import { parseCatalog } from "../store/memory-catalog.ts";
import {
  MemoryConflictError,
  MemoryFrontmatterError,
  MemoryLimitError,
  MemoryNotFoundError,
  MemoryPathError,
} from "../store/memory-errors.ts";
import { formatMemoryFile } from "../store/memory-frontmatter.ts";
import { MEMORY_INDEX_MARKER } from "../store/memory-index.ts";
import { createMemoryDir, type MemoryDir } from "./memory-dir.ts";

let parent: string;
let dir: MemoryDir;

beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), "memory-dir-"));
  dir = await createMemoryDir({ root: join(parent, "memory"), author: "session:test" });
});

afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

const memory = (name: string, description: string, body = "Body.\n", extra: Record<string, unknown> = {}) =>
  formatMemoryFile({ name, description, type: "feedback", ...extra }, body);

describe("createMemoryDir", () => {
  it("creates, reads, replaces and lists a memory, keeping MEMORY.md in step", async () => {
    const content = memory("testing", "Run vitest with --run in CI");
    const { hash } = await dir.write("feedback_testing.md", content);
    expect(hash).toBe(hashContent(content));
    expect(await dir.read("feedback_testing.md")).toEqual({ content, hash });
    const index = await readFile(join(dir.root, "MEMORY.md"), "utf8");
    expect(index).toContain("- [testing](feedback_testing.md) — Run vitest with --run in CI");

    const next = memory("testing", "Run vitest with --run everywhere");
    await dir.write("feedback_testing.md", next, { expectedHash: hash });
    expect((await dir.read("feedback_testing.md")).content).toBe(next);
    expect((await readFile(join(dir.root, "MEMORY.md"), "utf8")).includes("everywhere")).toBe(true);
    const listed = await dir.list();
    expect(listed.map((entry) => entry.name)).toEqual(["feedback_testing.md"]);
    expect(listed[0]?.type).toBe("feedback");
  });

  it("rejects a missing memory with a typed not-found error", async () => {
    await expect(dir.read("nope.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
    await expect(dir.delete("nope.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
  });

  it("refuses a write whose expected hash is stale and writes nothing", async () => {
    const first = await dir.write("a.md", memory("a", "first"));
    await dir.write("a.md", memory("a", "second"), { expectedHash: first.hash });
    const error = await dir.write("a.md", memory("a", "third"), { expectedHash: first.hash }).catch((e) => e);
    expect(error).toBeInstanceOf(MemoryConflictError);
    expect((error as MemoryConflictError).actualHash).toBe(hashContent(memory("a", "second")));
    expect((await dir.read("a.md")).content).toBe(memory("a", "second"));
    await expect(dir.write("a.md", memory("a", "x"), { expectedHash: null })).rejects.toBeInstanceOf(
      MemoryConflictError,
    );
    await expect(
      dir.write("b.md", memory("b", "x"), { expectedHash: "0".repeat(64) }),
    ).rejects.toBeInstanceOf(MemoryConflictError);
  });

  it("keeps every version with its author and time, hidden from listing, and restores a deleted memory", async () => {
    const first = memory("a", "first");
    await dir.write("topics/a.md", first);
    await dir.write("topics/a.md", memory("a", "second"), { author: "agent:reviewer", reason: "fix" });
    await dir.delete("topics/a.md", { author: "user" });
    await expect(dir.read("topics/a.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
    const versions = await dir.listVersions("topics/a.md");
    expect(versions.map((version) => [version.operation, version.author])).toEqual([
      ["delete", "user"],
      ["write", "agent:reviewer"],
      ["write", "session:test"],
    ]);
    expect(versions[1]?.reason).toBe("fix");
    expect(Date.parse(versions[0]?.at ?? "")).toBeGreaterThan(0);
    expect(await dir.list()).toEqual([]);
    const oldest = versions[2];
    if (!oldest) throw new Error("no version");
    await dir.restore("topics/a.md", oldest.id, { expectedHash: null });
    expect((await dir.read("topics/a.md")).content).toBe(first);
  });

  it("records an edit made outside the store before replacing it", async () => {
    await dir.write("a.md", memory("a", "by the store"));
    const edited = memory("a", "by an editor");
    await writeFile(join(dir.root, "a.md"), edited);
    await dir.write("a.md", memory("a", "by the store again"));
    const versions = await dir.listVersions("a.md");
    expect(versions.map((version) => version.operation)).toEqual(["write", "external", "write"]);
    expect(versions[1]?.content).toBe(edited);
  });

  it("renames, refusing to overwrite, and keeps both sides in the history", async () => {
    await dir.write("a.md", memory("a", "alpha"));
    await dir.write("b.md", memory("b", "beta"));
    await expect(dir.rename("a.md", "b.md")).rejects.toBeInstanceOf(MemoryConflictError);
    await dir.rename("a.md", "topics/c.md");
    expect((await dir.list()).map((entry) => entry.name)).toEqual(["b.md", "topics/c.md"]);
    expect((await dir.listVersions("a.md"))[0]?.operation).toBe("rename-from");
    expect((await dir.listVersions("topics/c.md"))[0]?.operation).toBe("rename-to");
  });

  it("normalises names to NFC, so the decomposed and composed spellings are one memory", async () => {
    const composed = "caf\u00e9.md";
    const decomposed = "cafe\u0301.md";
    await dir.write(decomposed, memory("cafe", "coffee"));
    expect((await dir.read(composed)).content).toBe(memory("cafe", "coffee"));
    expect((await dir.list()).map((entry) => entry.name)).toEqual([composed]);
  });

  it("caps file sizes", async () => {
    const small = await createMemoryDir({ root: join(parent, "small"), maxFileBytes: 100 });
    const error = await small.write("a.md", memory("a", "x".repeat(200))).catch((e) => e);
    expect(error).toBeInstanceOf(MemoryLimitError);
    expect((error as MemoryLimitError).maximum).toBe(100);
    await expect(small.read("a.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
  });

  it("refuses a write with a corrupt frontmatter, and never destroys a corrupt file already on disk", async () => {
    const error = await dir.write("a.md", "---\nname: [unclosed\n---\nbody\n").catch((e) => e);
    expect(error).toBeInstanceOf(MemoryFrontmatterError);
    expect((error as Error).message).toMatch(/not valid YAML near line/);
    await expect(dir.write("b.md", "---\nname: b\ndescription: d\ntype: opinion\n---\n")).rejects.toThrow(
      /use one of user, feedback, project, reference/,
    );
    await expect(dir.write("c.md", "---\nname: c\n")).rejects.toThrow(/never closed/);

    const corrupt = "---\nname: broken\ndescription: [\n---\nImportant text the user wrote.\n";
    await writeFile(join(dir.root, "broken.md"), corrupt);
    await dir.write("other.md", memory("other", "fine"));
    const listed = await dir.list();
    const broken = listed.find((entry) => entry.name === "broken.md");
    expect(broken?.problem).toMatch(/broken\.md: the frontmatter is not valid YAML/);
    expect(await readFile(join(dir.root, "broken.md"), "utf8")).toBe(corrupt);
    expect((await dir.read("broken.md")).content).toBe(corrupt);
    expect((await dir.loadIndex()).text).not.toContain("broken.md");
  });

  it("keeps a hand-written MEMORY.md preamble and regenerates the lines below the marker", async () => {
    await writeFile(join(dir.root, "MEMORY.md"), "# My notes\nAlways answer in French.\n");
    await dir.write("a.md", memory("a", "alpha"));
    const index = await readFile(join(dir.root, "MEMORY.md"), "utf8");
    expect(index.startsWith("# My notes\nAlways answer in French.\n")).toBe(true);
    expect(index).toContain(MEMORY_INDEX_MARKER);
    await dir.write("MEMORY.md", `# Rewritten preamble\n${MEMORY_INDEX_MARKER}\ngarbage line\n`);
    const rewritten = await readFile(join(dir.root, "MEMORY.md"), "utf8");
    expect(rewritten).toContain("# Rewritten preamble");
    expect(rewritten).not.toContain("garbage line");
    expect(rewritten).toContain("- [a](a.md) — alpha");
    await expect(dir.delete("MEMORY.md")).rejects.toBeInstanceOf(MemoryPathError);
  });

  it("loads the index cut at 200 lines and at 25,000 bytes, with a warning", async () => {
    // Written by hand (one fsync'd write per memory would only slow the test down); one scan indexes them.
    const many = await createMemoryDir({ root: join(parent, "many") });
    for (let index = 0; index < 230; index++) {
      const name = `m${String(index).padStart(3, "0")}.md`;
      await writeFile(join(many.root, name), memory(`m${index}`, `memory number ${index}`));
    }
    await many.list();
    const byLines = await many.loadIndex();
    expect(byLines.truncatedBy).toEqual(["lines"]);
    expect(byLines.text.split("\n\n> WARNING")[0]?.split("\n")).toHaveLength(200);
    expect(byLines.text).toMatch(/WARNING: MEMORY\.md has 23\d lines/);

    const wide = await createMemoryDir({ root: join(parent, "wide") });
    const preamble = Array.from({ length: 150 }, (_, index) => `${index} ${"x".repeat(190)}`).join("\n");
    await wide.write("MEMORY.md", `${preamble}\n`);
    const byBytes = await wide.loadIndex();
    expect(byBytes.truncatedBy).toEqual(["bytes"]);
    const loaded = byBytes.text.split("\n\n> WARNING")[0] ?? "";
    expect(Buffer.byteLength(loaded)).toBeLessThanOrEqual(25_000);
    expect(loaded.endsWith("x".repeat(190))).toBe(true);

    const both = await createMemoryDir({ root: join(parent, "both") });
    const longLines = Array.from({ length: 260 }, (_, index) => `${index} ${"y".repeat(150)}`).join("\n");
    await both.write("MEMORY.md", `${longLines}\n`);
    expect((await both.loadIndex()).truncatedBy).toEqual(["lines", "bytes"]);
  });

  it("sees files added, changed and removed by hand when it lists", async () => {
    await dir.write("a.md", memory("a", "alpha"));
    await writeFile(join(dir.root, "hand.md"), "# Written by hand\nSome text.\n");
    await rm(join(dir.root, "a.md"));
    const listed = await dir.list();
    expect(listed.map((entry) => [entry.name, entry.description])).toEqual([["hand.md", "Written by hand"]]);
    expect((await dir.catalog()).map((entry) => entry.name)).toEqual(["hand.md"]);
  });

  it("searches through the compact search file, and rebuilds it when it is missing or out of step", async () => {
    await dir.write("deploy.md", memory("deploy", "Staging deploys run on Fridays"));
    await dir.write("db.md", memory("database", "The app uses PostgreSQL"));
    const search = join(dir.root, ".unforget", "search.txt");
    // The catalog and the search file belong together: the fast path answers without touching the topic files.
    const texts = {
      catalog: await readFile(join(dir.root, ".unforget", "catalog.tsv"), "utf8"),
      search: await readFile(search, "utf8"),
    };
    expect(parseCatalog(texts.catalog)?.size).toBe(2);
    expect(prefilterCatalogText(texts, "fridays")?.map((hit) => hit.entry.name)).toEqual(["deploy.md"]);
    expect(await readFile(search, "utf8")).toContain(" staging deploys run fridays ");
    expect((await dir.search("staging deploys"))[0]?.entry.name).toBe("deploy.md");
    await rm(search);
    expect((await dir.search("postgresql"))[0]?.entry.name).toBe("db.md");
    expect(await readFile(search, "utf8")).toContain("postgresql");
    await writeFile(search, "#unforget-memory-search\tv1\t2\n wrong terms \t5\n other \t9\n");
    expect((await dir.search("fridays"))[0]?.entry.name).toBe("deploy.md");
  });

  it("opens the default folder of a project under the config home, keyed by the project path", async () => {
    const previous = process.env.UNFORGET_CONFIG_HOME;
    process.env.UNFORGET_CONFIG_HOME = join(parent, "config");
    try {
      const first = await createMemoryDir({ projectPath: "/work/app" });
      const same = await createMemoryDir({ projectPath: "/work/app/" });
      const other = await createMemoryDir({ projectPath: "/elsewhere/app" });
      expect(first.root).toBe(same.root);
      expect(first.root).not.toBe(other.root);
      expect(first.root.startsWith(join(parent, "config", "projects", "app-"))).toBe(true);
      await expect(createMemoryDir({})).rejects.toThrow(/needs `root`/);
    } finally {
      if (previous === undefined) delete process.env.UNFORGET_CONFIG_HOME;
      else process.env.UNFORGET_CONFIG_HOME = previous;
    }
  });
});
