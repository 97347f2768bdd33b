import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryDir, formatMemoryFile } from "@unforget/memory";
import { createPostgresMemoryStore } from "@unforget/memory-postgres";
import { createSqlClient } from "@unforget/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess, runInProcess } from "../test-support/run-cli.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "unforget-memory-cli-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const note = (name: string, description: string) =>
  formatMemoryFile({ name, description, type: "project" }, "Body.\n");

describe("unforget db sql", () => {
  it("prints the schema's SQL for operators, whole or after a version", async () => {
    const whole = await runInProcess(["db", "sql"]);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toContain("CREATE TABLE memory (");
    expect(whole.stdout).toContain("INSERT INTO unforget_schema_migration");
    expect(whole.stdout).toMatch(/^-- Unforget memory schema/);
    const later = await runInProcess(["db", "sql", "--component", "memory", "--from", "1"]);
    expect(later.stdout).not.toContain("CREATE TABLE memory (");
    const unknown = await runInProcess(["db", "sql", "--component", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unforget: There is no component "nope"; choose one of memory/);
  });
});

describe("unforget memory import", () => {
  // Three PGlite starts (two imports and a check): about 20 s each on a loaded 2-core machine.
  it("copies a memory dir with its history into PostgreSQL (PGlite here), and again copies nothing twice", {
    timeout: 180_000,
  }, async () => {
    const root = join(scratch, "memory");
    const dir = await createMemoryDir({ root, author: "session:laptop" });
    await dir.write("deploy.md", note("deploy", "Deploys run on Fridays"));
    await dir.write("deploy.md", note("deploy", "Deploys run on Thursdays"), { author: "user:ana" });
    await dir.write("old.md", note("old", "gone soon"));
    await dir.delete("old.md");
    const data = join(scratch, "pglite");
    const args = [
      "memory",
      "import",
      "--from",
      root,
      "--pglite",
      data,
      "--namespace",
      "team/web/project/shop",
      "--actor",
      "user:ops",
    ];
    const first = await runCliProcess(args);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^Imported 4 versions \(0 skipped\) into .*#team\/web\/project\/shop: 1 memories\.$/m,
    );
    const again = await runCliProcess(args);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);

    const client = await createSqlClient({ pglite: data });
    try {
      const store = await createPostgresMemoryStore({
        client,
        namespaces: ["team/web/project/shop"],
        actor: "user:check",
      });
      expect((await store.read("deploy.md")).content).toBe(note("deploy", "Deploys run on Thursdays"));
      expect((await store.listVersions("deploy.md")).map((version) => version.author)).toEqual([
        "user:ana",
        "session:laptop",
      ]);
      expect((await store.listVersions("old.md")).map((version) => version.operation)).toEqual([
        "delete",
        "write",
      ]);
    } finally {
      await client.close();
    }
  });

  it("says what is wrong with its input, and never writes", async () => {
    const noDatabase = await runInProcess([
      "memory",
      "import",
      "--from",
      scratch,
      "--namespace",
      "team/a/project/b",
    ]);
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toMatch(/^unforget: Give the database: --url/);
    const notADir = await runInProcess([
      "memory",
      "import",
      "--from",
      join(scratch, "none"),
      "--pglite",
      join(scratch, "x"),
      "--namespace",
      "team/a/project/b",
    ]);
    expect(notADir.code).toBe(2);
    expect(notADir.stderr).toMatch(/is not a memory dir/);
  });
});
