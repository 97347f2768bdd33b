import { formatMemoryFile, MemoryConflictError, MemoryNotFoundError } from "@unforget/memory";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "./postgres-memory-store.ts";

const note = (description: string) =>
  formatMemoryFile({ name: "n", description, type: "project" }, "Body.\n");

/** What a call ended with: ok, or the name of its error's class. */
async function outcome(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => "ok",
    (error: unknown) => (error instanceof Error ? error.constructor.name : String(error)),
  );
}

describe.skipIf(server === undefined)("races between writers of one memory on a server", () => {
  const database = useServerDatabase();
  const clients: SqlClient[] = [];
  afterAll(async () => {
    for (const client of clients) await client.close();
  });

  /** Two stores on one namespace, each on its own pool (as two processes would be). */
  const twoStores = async (): Promise<[PostgresMemoryStore, PostgresMemoryStore]> => {
    const namespace = freshNamespace();
    const stores: PostgresMemoryStore[] = [];
    for (const poolSize of [3, 4]) {
      const client = await createSqlClient({ url: database().url, poolSize });
      clients.push(client);
      stores.push(await createPostgresMemoryStore({ client, namespaces: [namespace], actor: "agent:race" }));
    }
    return stores as [PostgresMemoryStore, PostgresMemoryStore];
  };

  it("a create or a write racing a delete succeeds or is a MemoryConflictError, never a raw SQL error", async () => {
    const [deleter, creator] = await twoStores();
    const seen = new Map<string, number>();
    const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    for (let round = 0; round < 150; round++) {
      const name = `race-${round % 5}.md`;
      await creator.write(name, note(`round ${round}`));
      const [deleted, created] = await Promise.all([
        outcome(deleter.delete(name)),
        // Alternately a create (only if absent) and a plain write: both insert a head when none is there.
        outcome(creator.write(name, note(`again ${round}`), round % 2 === 0 ? { expectedHash: null } : {})),
      ]);
      count(`delete ${deleted}`);
      count(`write ${created}`);
      expect(["ok", MemoryNotFoundError.name], `delete in round ${round}`).toContain(deleted);
      expect(["ok", MemoryConflictError.name], `write in round ${round}`).toContain(created);
      // The history stays whole: versions numbered …, 3, 2, 1 newest first, with no gap or repeat.
      const versions = await creator.listVersions(name);
      expect(versions.map((version) => version.version)).toEqual(
        versions.map((_, index) => versions.length - index),
      );
      // Whatever won, the memory is there (the write came last) or absent with a tombstone on top.
      const head = await creator.read(name).catch(() => undefined);
      const top = (await creator.listVersions(name))[0];
      if (head === undefined) expect(top?.operation).toBe("delete");
      else expect(head.version).toBe(top?.version);
      if (head !== undefined) await creator.delete(name);
    }
    // The race has to have happened at least once for the test to say anything.
    expect(seen.get("delete ok") ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
  }, 120_000);

  it("a rename onto a memory being deleted succeeds or is a MemoryConflictError", async () => {
    const [deleter, renamer] = await twoStores();
    const seen = new Set<string>();
    for (let round = 0; round < 100; round++) {
      const [from, to] = [`from-${round % 4}.md`, `to-${round % 4}.md`];
      await renamer.write(from, note(`from ${round}`));
      await renamer.write(to, note(`to ${round}`));
      const [deleted, renamed] = await Promise.all([
        outcome(deleter.delete(to)),
        outcome(renamer.rename(from, to)),
      ]);
      seen.add(renamed);
      expect(deleted, `delete in round ${round}`).toBe("ok");
      expect(["ok", MemoryConflictError.name], `rename in round ${round}`).toContain(renamed);
      const versions = await renamer.listVersions(to);
      expect(versions.map((version) => version.version)).toEqual(
        versions.map((_, index) => versions.length - index),
      );
      for (const name of [from, to]) await renamer.delete(name).catch(() => undefined);
    }
    expect([...seen]).toContain("ok");
  }, 120_000);
});
