import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryDir, type MemoryDir } from "../dir/memory-dir.ts";
import { createDreamStateFolder } from "../dream/dream-state.ts";
import { createSessionMemory } from "../session/session-memory.ts";
import { MemoryNotFoundError, MemoryStoreError } from "./memory-errors.ts";
import { formatMemoryFile } from "./memory-frontmatter.ts";
import { createProposalQueue } from "./memory-proposals.ts";

// Only a missing file is "absent". A folder where a file belongs, a file where a folder belongs on the store's
// own paths, a symlink loop or a corrupt record is an error the caller sees, never an empty answer that
// lets a write go ahead as if nothing were there. (Tests run as root, so permissions cannot deny a read:
// these are the failures root meets too.)
let root: string;
let memory: MemoryDir;
const note = (body: string) => formatMemoryFile({ name: "n", description: "a note", type: "project" }, body);
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

beforeEach(async () => {
  root = join(await mkdtemp(join(tmpdir(), "memory-store-files-")), "memory");
  memory = await createMemoryDir({ root, author: "agent:test" });
});
afterEach(async () => {
  await rm(join(root, ".."), { recursive: true, force: true });
});

describe("a memory dir tells absent from unreadable", () => {
  it("a folder where a memory file belongs is an error, not a missing memory", async () => {
    await mkdir(join(root, "deploy.md"));
    const read = await rejection(memory.read("deploy.md"));
    expect(read).toBeInstanceOf(MemoryStoreError);
    expect((read as MemoryStoreError).message).toMatch(/deploy\.md.*folder/);
    expect(read).not.toBeInstanceOf(MemoryNotFoundError);
    expect(await rejection(memory.write("deploy.md", note("Fridays.\n")))).toBeInstanceOf(MemoryStoreError);
  });

  it("a memory under a file that is not a folder is truly absent (ENOTDIR)", async () => {
    await writeFile(join(root, "notes"), "a plain file\n");
    expect(await rejection(memory.read("notes/deploy.md"))).toBeInstanceOf(MemoryNotFoundError);
  });

  it("a memory's version folder that is a file is an error, not an empty history", async () => {
    await memory.write("deploy.md", note("Fridays.\n"));
    const folder = join(root, ".unforget", "versions", "deploy.md");
    await rm(folder, { recursive: true });
    await writeFile(folder, "not a folder\n");
    expect(await rejection(memory.listVersions("deploy.md"))).toBeInstanceOf(MemoryStoreError);
    // The next write would append to a history it could not read: refused before anything is written.
    const write = await rejection(memory.write("deploy.md", note("Thursdays.\n")));
    expect(write).toBeInstanceOf(MemoryStoreError);
    expect((await memory.read("deploy.md")).content).toBe(note("Fridays.\n"));
  });

  it("a version record that is a folder or corrupt is an error, not a missing version", async () => {
    await memory.write("deploy.md", note("Fridays.\n"));
    const [version] = await memory.listVersions("deploy.md");
    const file = join(root, ".unforget", "versions", "deploy.md", `${version?.id}.json`);
    await writeFile(file, '{"id": "cut off');
    expect(await rejection(memory.readVersion("deploy.md", version?.id ?? ""))).toBeInstanceOf(
      MemoryStoreError,
    );
    await rm(file);
    await mkdir(file);
    expect(await rejection(memory.readVersion("deploy.md", version?.id ?? ""))).toBeInstanceOf(
      MemoryStoreError,
    );
    // A version that is not there is still "not found".
    expect(
      await rejection(memory.readVersion("deploy.md", "2020-01-01T00-00-00-000Z-aaaaaaaa")),
    ).toBeInstanceOf(MemoryNotFoundError);
  });

  it("a write id whose record cannot be read refuses the write instead of writing twice", async () => {
    const writeId = "0b6f3c6e-1a52-4f0e-9a0e-3f6d2f1c9b11";
    const record = join(
      root,
      ".unforget",
      "write-ids",
      `${createHash("sha256").update(writeId, "utf8").digest("hex")}.json`,
    );
    await mkdir(record, { recursive: true });
    const write = await rejection(memory.write("deploy.md", note("Fridays.\n"), { writeId }));
    expect(write).toBeInstanceOf(MemoryStoreError);
    await expect(memory.read("deploy.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
  });

  it("a symlink loop on the versions' path is an error (ELOOP), not an empty history", async () => {
    const versions = join(root, ".unforget", "versions");
    await mkdir(versions, { recursive: true });
    await symlink(join(versions, "loop.md"), join(versions, "loop.md"));
    expect(await rejection(memory.listVersions("loop.md"))).toBeInstanceOf(MemoryStoreError);
    expect(await readdir(versions)).toEqual(["loop.md"]);
  });
});

describe("the memory dir's other files tell absent from unreadable", () => {
  it("MEMORY.md that is a folder is an error, not an index rebuilt over it", async () => {
    await mkdir(join(root, "MEMORY.md"));
    expect(await rejection(memory.loadIndex())).toBeInstanceOf(MemoryStoreError);
  });

  it("a dream state that does not parse is an error, not a fresh state written over it", async () => {
    const folder = join(root, ".unforget", "dream");
    const dream = createDreamStateFolder(folder);
    await dream.update((state) => ({ ...state, sessions: ["s1", "s2"] }));
    await writeFile(join(folder, "state.json"), '{"sessions": ["s1", "s2"');
    expect(await rejection(dream.read())).toBeInstanceOf(MemoryStoreError);
    expect(await rejection(dream.update((state) => state))).toBeInstanceOf(MemoryStoreError);
    // With no state yet, there is nothing to lose: a fresh one.
    expect(await createDreamStateFolder(join(root, "no-dream-yet")).read()).toEqual({ sessions: [] });
  });

  it("a proposals folder that is a file, or a proposal that is a folder, is an error, not an empty queue", async () => {
    const folder = join(root, ".unforget", "proposals");
    await writeFile(folder, "not a folder\n");
    expect(await rejection(createProposalQueue(folder).list())).toBeInstanceOf(MemoryStoreError);
    await rm(folder);
    const queue = createProposalQueue(folder);
    const proposal = await queue.propose({ author: "dream", summary: "merge", changes: [] });
    const file = join(folder, `${proposal.id}.json`);
    await rm(file);
    await mkdir(file);
    expect(await rejection(queue.get(proposal.id))).toBeInstanceOf(MemoryStoreError);
    expect(await rejection(queue.list())).toBeInstanceOf(MemoryStoreError);
    await rm(file, { recursive: true });
    expect(await rejection(queue.get(proposal.id))).toBeInstanceOf(MemoryNotFoundError);
  });

  it("session notes that are a folder are an error, not the empty template", async () => {
    const directory = join(root, "..", "session");
    await mkdir(join(directory, "session-memory.md"), { recursive: true });
    const notes = await createSessionMemory({ directory });
    expect(await rejection(notes.readRaw())).toBeInstanceOf(MemoryStoreError);
  });
});
