import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sampleTaskRecord } from "../testing/index.ts";
import { createFileTaskStateStore } from "./file-task-state-store.ts";

describe("file store on disk", () => {
  it("keeps one readable state file per task and truncates superseded versions", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tasks-store-"));
    const store = createFileTaskStateStore({ dir });
    const record = sampleTaskRecord();
    await store.create(record);
    await store.update(record.id, 1, { ...record, status: "completed" });
    const names = (await readdir(join(dir, record.id))).sort();
    expect(names).toEqual(["state.1.json", "state.2.json"]);
    expect(await readFile(join(dir, record.id, "state.1.json"), "utf8")).toBe("");
    expect(JSON.parse(await readFile(join(dir, record.id, "state.2.json"), "utf8"))).toMatchObject({
      status: "completed",
      version: 2,
    });
    await rm(dir, { recursive: true, force: true });
  });

  it("reports a corrupt state file with its path instead of guessing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tasks-store-"));
    const store = createFileTaskStateStore({ dir });
    const record = sampleTaskRecord();
    await store.create(record);
    await writeFile(join(dir, record.id, "state.1.json"), "{ not json");
    await expect(store.get(record.id)).rejects.toMatchObject({
      code: "task_store",
      location: join(dir, record.id, "state.1.json"),
    });
    await rm(dir, { recursive: true, force: true });
  });

  it("rejects ids that would leave the directory", async () => {
    const store = createFileTaskStateStore({ dir: tmpdir() });
    await expect(store.get("../etc")).rejects.toMatchObject({ code: "task_invalid_input" });
  });
});
