import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import {
  createDreamJob,
  createMemoryDir,
  createSecretScanner,
  createTeamMemory,
  formatMemoryFile,
  hashContent,
  MemoryArgumentError,
  MemoryConflictError,
  MemoryNotFoundError,
  MemoryPathError,
  MemorySecretError,
} from "@unforget/memory";
import { SchemaMismatchError } from "@unforget/postgres";
import { describe, expect, it } from "vitest";
import { freshNamespace, usePGlite } from "./__fixtures__/stores.ts";
import { importMemoryHistory } from "./import-memory-history.ts";
import { openPostgresMemoryStore } from "./open-postgres-memory-store.ts";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "./postgres-memory-store.ts";
import type { MemoryChange } from "./watch-memory-changes.ts";

const pglite = usePGlite();

const note = (name: string, description: string, body = "Body.\n") =>
  formatMemoryFile({ name, description, type: "project" }, body);

const open = (namespaces = [freshNamespace()], extra: { actor?: string; machine?: string } = {}) =>
  createPostgresMemoryStore({
    client: pglite(),
    namespaces,
    actor: extra.actor ?? "agent:test",
    machine: extra.machine ?? "box-1",
  });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** Takes changes from a watch until `count` arrived. */
async function take(changes: AsyncIterator<MemoryChange>, count: number): Promise<MemoryChange[]> {
  const taken: MemoryChange[] = [];
  while (taken.length < count) {
    const next = await changes.next();
    if (next.done) break;
    taken.push(next.value);
  }
  return taken;
}

describe("createPostgresMemoryStore", () => {
  it("records the actor set when the store was built, with its machine, on every version", async () => {
    const store = await open(undefined, { actor: "agent:reviewer", machine: "ci-7" });
    await store.write("a.md", note("a", "one"));
    await store.write("a.md", note("a", "two"), { author: "extraction:session:s1" });
    const versions = await store.listVersions("a.md");
    expect(versions.map((version) => [version.actor, version.author, version.version])).toEqual([
      ["agent:reviewer@ci-7", "extraction:session:s1", 2],
      ["agent:reviewer@ci-7", "agent:reviewer@ci-7", 1],
    ]);
    expect((await store.read("a.md")).version).toBe(2);
    const defaultMachine = await createPostgresMemoryStore({
      client: pglite(),
      namespaces: [freshNamespace()],
      actor: "user:ana",
    });
    await defaultMachine.write("b.md", note("b", "b"));
    expect((await defaultMachine.listVersions("b.md"))[0]?.actor).toBe(`user:ana@${hostname()}`);
  });

  it("names the current hash, version and author in a conflict", async () => {
    const store = await open();
    const other = await createPostgresMemoryStore({
      client: pglite(),
      namespaces: [store.namespace],
      actor: "agent:other",
      machine: "box-2",
    });
    const first = await store.write("a.md", note("a", "one"));
    await other.write("a.md", note("a", "two"), { expectedHash: first.hash });
    const conflict = await rejection(store.write("a.md", note("a", "three"), { expectedHash: first.hash }));
    expect(conflict).toBeInstanceOf(MemoryConflictError);
    expect(conflict).toMatchObject({
      actualHash: hashContent(note("a", "two")),
      actualVersion: 2,
      actualAuthor: "agent:other@box-2",
    });
    expect((conflict as Error).message).toMatch(/version 2, written by agent:other@box-2/);
  });

  it("lists versions newest first also where version ids gain a digit (ids are numbers, not text)", async () => {
    const store = await open();
    // The next version ids cross a power of ten (…98, 99, 100, 101…), where text order differs.
    const { rows } = await pglite().query<{ last: string }>(
      "SELECT coalesce(max(id), 0)::text AS last FROM memory_version",
    );
    const power = 10 ** (rows[0]?.last.length ?? 1) * 10;
    await pglite().query(`SELECT setval(pg_get_serial_sequence('memory_version', 'id'), ${power - 3})`);
    for (let index = 1; index <= 5; index++) await store.write("a.md", note("a", `write ${index}`));
    const versions = await store.listVersions("a.md");
    expect(versions.map((version) => version.version)).toEqual([5, 4, 3, 2, 1]);
    expect(versions.map((version) => version.id)).toEqual(
      [2, 1, 0, -1, -2].map((offset) => String(power + offset)),
    );
  });

  it("keeps namespaces apart: an allow-list, paths that never name one, and typed refusals before any I/O", async () => {
    const mine = freshNamespace();
    const theirs = freshNamespace();
    const store = await open([mine, theirs]);
    await store.write("team/x/project/y/notes.md", note("n", "a path that looks like a namespace"));
    const neighbour = store.inNamespace(theirs);
    expect(await neighbour.list()).toEqual([]);
    expect((await store.list()).map((entry) => entry.name)).toEqual(["team/x/project/y/notes.md"]);
    expect(() => store.inNamespace(freshNamespace())).toThrow(MemoryArgumentError);
    expect(() => store.inNamespace("team/../project/x")).toThrow(MemoryArgumentError);
    await expect(
      createPostgresMemoryStore({ client: pglite(), namespaces: ["shared"], actor: "agent:x" }),
    ).rejects.toBeInstanceOf(MemoryArgumentError);
  });

  it("refuses bad input with typed errors and writes nothing", async () => {
    const store = await open();
    const cases: Array<[unknown, Promise<unknown>]> = [
      [MemoryPathError, store.write(`${"é".repeat(520)}.md`, note("x", "a path over 1,024 bytes after NFC"))],
      [MemoryArgumentError, store.write("with-nul.md", note("x", "x", "NUL \u0000 inside\n"))],
      [MemoryArgumentError, store.write("lone.md", note("x", "x", "a lone \udc00 surrogate\n"))],
      [MemoryArgumentError, store.write("hash.md", note("x", "x"), { expectedHash: "not-a-hash" })],
      [MemoryNotFoundError, store.readVersion("hash.md", "12; DROP TABLE memory")],
      [MemoryNotFoundError, store.readVersion("hash.md", "999999")],
    ];
    for (const [, attempt] of cases) attempt.catch(() => undefined);
    for (const [type, attempt] of cases) expect(await rejection(attempt)).toBeInstanceOf(type as never);
    // A YAML escape that decodes to a lone surrogate is valid text: stored as written, found by search.
    await store.write("escaped.md", note("x", "an escaped \udc00 in the frontmatter"));
    expect((await store.read("escaped.md")).content).toContain("\\udc00");
    await store.delete("escaped.md");
    expect(await store.list()).toEqual([]);
    const { rows } = await pglite().query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory_version WHERE namespace = $1 AND path <> 'escaped.md'",
      [store.namespace],
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("scans for secrets before the transaction: a refused write leaves no row", async () => {
    const team = await createTeamMemory({ store: await open() });
    const key = `sk_${"live"}_${"4eC39HqLyjWDarjtT1zdp7dc"}`;
    const refused = await rejection(team.write("pay.md", note("pay", `Stripe key ${key}`)));
    expect(refused).toBeInstanceOf(MemorySecretError);
    expect((refused as MemorySecretError).rules).toContain("stripe-secret-key");
    expect(await team.list()).toEqual([]);
  });

  it("serves MEMORY.md from the catalog, with the hand-written top kept", async () => {
    const store = await open();
    await store.write("deploy.md", note("deploy", "Staging deploys on Fridays"));
    const index = await store.read("MEMORY.md");
    expect(index.content).toContain("- [deploy](deploy.md) — Staging deploys on Fridays");
    await store.write("MEMORY.md", "# Team memory\nAsk Ana before deleting anything.\n", {
      expectedHash: index.hash,
    });
    const loaded = await store.loadIndex();
    expect(loaded.text).toContain("Ask Ana before deleting anything.");
    expect(loaded.text).toContain("(deploy.md)");
    expect(
      await rejection(store.write("MEMORY.md", "# stale\n", { expectedHash: index.hash })),
    ).toBeInstanceOf(MemoryConflictError);
    expect(await rejection(store.delete("MEMORY.md"))).toBeInstanceOf(MemoryPathError);
  });

  it("watches changes in commit order, each once, resuming after a cursor", async () => {
    const store = await open();
    const controller = new AbortController();
    const after = await store.currentCursor();
    const watch = store
      .watch({ after, signal: controller.signal, pollIntervalMs: 200 })
      [Symbol.asyncIterator]();
    const first = watch.next();
    await store.write("a.md", note("a", "one"));
    await store.write("a.md", note("a", "two"));
    await store.rename("a.md", "b.md");
    await store.delete("b.md");
    const changes = [(await first).value as MemoryChange, ...(await take(watch, 4))];
    expect(changes.map((change) => [change.path, change.op, change.version])).toEqual([
      ["a.md", "write", 1],
      ["a.md", "write", 2],
      ["a.md", "rename-from", 3],
      ["b.md", "rename-to", 1],
      ["b.md", "delete", 2],
    ]);
    expect(new Set(changes.map((change) => change.actor))).toEqual(new Set(["agent:test@box-1"]));
    controller.abort();
    expect((await watch.next()).done).toBe(true);
    // A watch resumed after the second change sees the rest only.
    const resumed = store
      .watch({ after: changes[1]?.cursor as string, pollIntervalMs: 200 })
      [Symbol.asyncIterator]();
    expect((await take(resumed, 3)).map((change) => change.op)).toEqual([
      "rename-from",
      "rename-to",
      "delete",
    ]);
    await resumed.return?.();
    expect(() => store.watch({ after: "yesterday" })).toThrow(MemoryArgumentError);
  });

  it("keeps proposals and the dream's state in the database", async () => {
    const store = await open();
    await store.write("db_old.md", note("database", "The app uses MySQL"));
    await store.write("db_new.md", note("database", "The app uses PostgreSQL now"));
    const queue = store.proposals();
    const job = createDreamJob({ store, state: store.dreamState(), proposals: queue, minSessions: 1 });
    await job.recordSession("s1");
    expect(await job.due()).toEqual({ due: true, reason: "1 sessions since the last dream" });
    const report = await job.run();
    expect(report.ran).toBe(true);
    expect(report.reportPath).toMatch(/^memory_dream_report:\d+$/);
    const pending = await queue.list();
    expect(pending.map((proposal) => proposal.id)).toEqual([report.proposalId]);
    const outcome = await queue.approve(report.proposalId as string, store);
    expect(outcome.conflicts).toEqual([]);
    expect(await queue.list()).toEqual([]);
    expect((await job.due()).reason).toMatch(/cooling down/);
    // The dream lock is a lease: a second dream while one runs does not start.
    const state = store.dreamState();
    const inner = await state.withDreamLock(
      async () => state.withDreamLock(async () => "second", 60_000),
      60_000,
    );
    expect(inner).toEqual({ locked: true, value: { locked: false } });
  });

  it("checks the schema without changing it when opened with migrate: false", async () => {
    const folder = await mkdtemp(join(tmpdir(), "memory-postgres-nomigrate-"));
    const { createSqlClient } = await import("@unforget/postgres");
    const empty = await createSqlClient({ pglite: join(folder, "data") });
    try {
      const refused = await rejection(
        createPostgresMemoryStore({
          client: empty,
          namespaces: [freshNamespace()],
          actor: "agent:x",
          migrate: false,
        }),
      );
      expect(refused).toBeInstanceOf(SchemaMismatchError);
      expect((refused as Error).message).toMatch(/unforget db sql/);
    } finally {
      await empty.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("imports a memory dir with its history, and a second import adds nothing", async () => {
    const folder = await mkdtemp(join(tmpdir(), "memory-import-"));
    try {
      const dir = await createMemoryDir({ root: join(folder, "memory"), author: "session:old" });
      await dir.write("a.md", note("a", "one"));
      await dir.write("a.md", note("a", "two"), { author: "agent:editor" });
      await dir.rename("a.md", "b.md");
      await dir.write("gone.md", note("gone", "short-lived"));
      await dir.delete("gone.md");
      const store: PostgresMemoryStore = await open();
      const first = await importMemoryHistory(dir, store);
      expect(first).toMatchObject({ versions: 5, memories: 1, untracked: [] });
      expect((await store.read("b.md")).content).toBe(note("a", "two"));
      expect(
        (await store.listVersions("b.md")).map((version) => [version.operation, version.author]),
      ).toEqual([["rename-to", "session:old"]]);
      expect((await store.listVersions("a.md")).map((version) => version.author)).toEqual([
        "session:old",
        "agent:editor",
        "session:old",
      ]);
      expect((await store.listVersions("gone.md")).map((version) => version.operation)).toEqual([
        "delete",
        "write",
      ]);
      const again = await importMemoryHistory(dir, store);
      expect(again.versions).toBe(5);
      expect((await store.listVersions("a.md")).length).toBe(3);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe("a secret scan that ran only in part", () => {
  it("lets the write go ahead and says so in its result, for topics and the index alike", async () => {
    const scanner = createSecretScanner({
      // secretlint failing the way a broken install does: the pattern rules still run.
      lint: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'rules')");
      },
      onWarning: () => {},
    });
    const store = await createPostgresMemoryStore({
      client: pglite(),
      namespaces: [freshNamespace()],
      actor: "agent:test",
      secretScanner: scanner,
    });
    const written = await store.write("deploy.md", note("deploy", "Deploys run on Fridays"));
    expect(written.warnings).toEqual([expect.stringMatching(/^deploy\.md: .*secretlint failed/)]);
    // The same content again changes nothing, and the scan's gap is still reported.
    const again = await store.write("deploy.md", note("deploy", "Deploys run on Fridays"));
    expect(again.warnings).toHaveLength(1);
    const index = await store.write("MEMORY.md", "# Memory\n");
    expect(index.warnings).toEqual([expect.stringMatching(/^MEMORY\.md: .*secretlint failed/)]);
    // A complete scan reports nothing.
    const plain = await (await open()).write("deploy.md", note("deploy", "Deploys run on Fridays"));
    expect(plain.warnings).toBeUndefined();
  });
});

describe("createTeamMemory on a database", () => {
  it("opens the PostgreSQL store on PGlite as team memory's store, with the secret scan", async () => {
    const folder = await mkdtemp(join(tmpdir(), "team-memory-pglite-"));
    try {
      const team = await createTeamMemory({
        open: ({ secretScanner }) =>
          openPostgresMemoryStore({
            pglite: join(folder, "data"),
            namespace: freshNamespace(),
            actor: "agent:team",
            secretScanner,
          }),
      });
      await team.write("deploy.md", note("deploy", "Deploys run on Fridays"));
      expect((await team.list()).map((entry) => entry.name)).toEqual(["deploy.md"]);
      expect(
        await rejection(team.write("key.md", note("key", `token ghp_${"a1B2c3D4e5".repeat(4)}`))),
      ).toBeInstanceOf(MemorySecretError);
      await team.close();
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
