import { constants } from "node:fs";
import { mkdir, mkdtemp, open, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { confinePath, writeFileAtomic } from "@unforget/files";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolHarness, type ToolHarness } from "../__fixtures__/tool-harness.ts";
import { createReadTool } from "./read-tool.ts";
import { createWriteTool } from "./write-tool.ts";

// A thread flips `sub` between the real folder and a symlink to a folder outside the working directory, as
// fast as it can, while the tools read and write under `sub`. Each try is also made the way the tools did
// before (check the path, then open it by name): that arm must escape at least once, which shows the race is
// really run; the tools must never escape.
const TRIES = 1_000;
/** The tries go on past TRIES, up to this many, until the old way has escaped at least once. */
const MAX_TRIES = 20_000;
const PARALLEL = 10;

const SWAPPER = `
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { sub, aside, target, stop } = workerData;
const flag = new Int32Array(stop);
// Each state is held a moment (Atomics.wait sleeps up to 0.1 ms), so both last about as long.
const pause = () => Atomics.wait(flag, 0, 0, 0.1);
// A write may create a new, empty "sub" while the real one is aside: it is removed, so the flips go on.
while (Atomics.load(flag, 0) === 0) {
  try { fs.renameSync(sub, aside); } catch {}
  try { fs.symlinkSync(target, sub); } catch {}
  pause();
  try { fs.unlinkSync(sub); } catch { try { fs.rmSync(sub, { recursive: true, force: true }); } catch {} }
  try { fs.renameSync(aside, sub); } catch {}
  pause();
}
`;

describe("a folder swapped for a symlink while the tools run", () => {
  let harness: ToolHarness;
  let outside: string;
  let swapper: Worker;
  let stop: Int32Array;

  beforeEach(async () => {
    harness = await createToolHarness("unforget-race-");
    outside = await realpath(await mkdtemp(join(tmpdir(), "unforget-race-outside-")));
    await mkdir(join(harness.cwd, "sub"));
    await mkdir(join(outside, "sub"));
    await writeFile(join(harness.cwd, "sub", "secret.txt"), "inside\n");
    await writeFile(join(outside, "sub", "secret.txt"), "OUTSIDE\n");
    const shared = new SharedArrayBuffer(4);
    stop = new Int32Array(shared);
    swapper = new Worker(SWAPPER, {
      eval: true,
      workerData: {
        sub: join(harness.cwd, "sub"),
        aside: join(harness.cwd, "sub.real"),
        target: join(outside, "sub"),
        stop: shared,
      },
    });
  });
  afterEach(async () => {
    Atomics.store(stop, 0, 1);
    await swapper.terminate();
    await harness.close();
    await rm(outside, { recursive: true, force: true });
  });

  /** The old way: confine, then open the real path by name (O_NOFOLLOW guards the last component only). */
  async function readCheckedThenOpened(): Promise<string> {
    try {
      const { path } = await confinePath("sub/secret.txt", { base: harness.cwd, roots: [harness.cwd] });
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        return await handle.readFile("utf8");
      } finally {
        await handle.close();
      }
    } catch {
      return "";
    }
  }

  it("Read never returns the file outside, where checking then opening by name does", async () => {
    const read = createReadTool();
    let toolEscapes = 0;
    let oldEscapes = 0;
    // Many calls in flight at once, as a model's parallel Reads are.
    let tries = 0;
    for (; tries < MAX_TRIES && (tries < TRIES || oldEscapes === 0); tries += PARALLEL) {
      const outputs = await Promise.all(
        Array.from({ length: PARALLEL }, () => harness.call(read, { file_path: "sub/secret.txt" })),
      );
      toolEscapes += outputs.filter((output) => harness.text(output).includes("OUTSIDE")).length;
      const old = await Promise.all(Array.from({ length: PARALLEL }, readCheckedThenOpened));
      oldEscapes += old.filter((text) => text.includes("OUTSIDE")).length;
    }
    console.log(
      `Read under a swapping folder: ${toolEscapes}/${tries} escapes; check-then-open: ${oldEscapes}/${tries}`,
    );
    expect(oldEscapes).toBeGreaterThan(0);
    expect(toolEscapes).toBe(0);
  });

  it("Write never creates a file outside, where checking then writing by name does", async () => {
    const write = createWriteTool();
    const writeCheckedThenNamed = async (name: string) => {
      try {
        const { path } = await confinePath(`sub/${name}`, { base: harness.cwd, roots: [harness.cwd] });
        await writeFileAtomic(path, "x", { durable: false });
      } catch {}
    };
    const landed = async (prefix: string) =>
      (await readdir(join(outside, "sub"))).filter((name) => name.startsWith(prefix));
    let tries = 0;
    for (; tries < MAX_TRIES && (tries < TRIES || (await landed("old-")).length === 0); tries += PARALLEL) {
      const batch = Array.from({ length: PARALLEL }, (_, index) => tries + index);
      await Promise.all(
        batch.map((each) => harness.call(write, { file_path: `sub/tool-${each}.txt`, content: "x" })),
      );
      await Promise.all(batch.map((each) => writeCheckedThenNamed(`old-${each}.txt`)));
    }
    const toolEscapes = (await landed("tool-")).length;
    const oldEscapes = (await landed("old-")).length;
    console.log(
      `Write under a swapping folder: ${toolEscapes}/${tries} escapes; check-then-write: ${oldEscapes}/${tries}`,
    );
    expect(oldEscapes).toBeGreaterThan(0);
    expect(toolEscapes).toBe(0);
    // Nor do the tools' temporary files.
    expect(await landed(".tool-")).toEqual([]);
  });
});
