import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryDir } from "./memory-dir.ts";

const WORKER = join(dirname(fileURLToPath(import.meta.url)), "..", "__fixtures__", "concurrent-writer.ts");

function runWorker(
  root: string,
  worker: string,
  appends: number,
  kind: string,
  mode = "append",
): Promise<{ conflicts: number }> {
  return new Promise((resolve, reject) => {
    const args = [WORKER, root, worker, String(appends), kind, mode];
    const child = spawn(process.execPath, ["--import", "tsx", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as { conflicts: number });
      else reject(new Error(`worker ${worker} exited with ${code}: ${stderr}`));
    });
  });
}

let parent: string | undefined;
afterEach(async () => {
  if (parent) await rm(parent, { recursive: true, force: true });
});

describe.each(["dir", "team"])("several processes writing the same memory (%s)", (kind) => {
  it("lose no update: every append of every process is there, each in its own version", async () => {
    parent = await mkdtemp(join(tmpdir(), "memory-concurrent-"));
    const root = join(parent, "memory");
    const workers = ["w1", "w2", "w3", "w4"];
    const appends = 8;
    await Promise.all(workers.map((worker) => runWorker(root, worker, appends, kind)));
    const dir = await createMemoryDir({ root });
    const { content } = await dir.read("shared.md");
    for (const worker of workers) {
      for (let index = 0; index < appends; index++) expect(content).toContain(`- ${worker} ${index}\n`);
    }
    expect(content.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(
      workers.length * appends,
    );
    const versions = await dir.listVersions("shared.md");
    expect(versions).toHaveLength(workers.length * appends);
    expect(new Set(versions.map((version) => version.author))).toEqual(
      new Set(workers.map((w) => `agent:${w}`)),
    );
    // The catalog and MEMORY.md saw every file, although every process rewrote them.
    expect((await dir.catalog()).map((entry) => entry.name).sort()).toEqual([
      "shared.md",
      "w1.md",
      "w2.md",
      "w3.md",
      "w4.md",
    ]);
    const index = await readFile(join(dir.root, "MEMORY.md"), "utf8");
    for (const worker of workers)
      expect(index).toContain(`(${worker}.md) — worker ${worker} wrote ${appends}`);
  }, 120_000);
});

describe("several processes incrementing one counter", () => {
  it("reach the exact total: a stale expectedHash is a conflict even when the content is equal", async () => {
    parent = await mkdtemp(join(tmpdir(), "memory-counter-"));
    const root = join(parent, "memory");
    const dir = await createMemoryDir({ root });
    await dir.write(
      "counter.md",
      "---\nname: counter\ndescription: a shared counter\ntype: project\n---\n0\n",
    );
    const workers = ["w1", "w2", "w3", "w4"];
    const increments = 25;
    await Promise.all(workers.map((worker) => runWorker(root, worker, increments, "dir", "counter")));
    const { content } = await dir.read("counter.md");
    expect(Number(content.split("---\n")[2])).toBe(workers.length * increments);
    expect(await dir.listVersions("counter.md")).toHaveLength(workers.length * increments + 1);
  }, 120_000);
});
