import { formatMemoryFile } from "@unforget/memory";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore } from "./postgres-memory-store.ts";

const note = (description: string) =>
  formatMemoryFile({ name: "n", description, type: "project" }, "Body.\n");

describe.skipIf(server === undefined)(
  "currentCursor() while another transaction is open on the server",
  () => {
    const database = useServerDatabase();
    const clients: SqlClient[] = [];
    afterAll(async () => {
      for (const client of clients) await client.close();
    });
    const connect = async () => {
      const client = await createSqlClient({ url: database().url });
      clients.push(client);
      return client;
    };

    it("is now: a change committed before it is not delivered again, one committed after it is", async () => {
      const store = await createPostgresMemoryStore({
        client: await connect(),
        namespaces: [freshNamespace()],
        actor: "agent:cursor",
      });
      // Any transaction that holds an id (here: another connection's, idle in its transaction) keeps the server's
      // oldest running transaction behind every change that follows.
      const bystander = await connect();
      let finish: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        finish = resolve;
      });
      let opened: () => void = () => {};
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const transaction = bystander.transaction(async (tx) => {
        await tx.query("SELECT pg_current_xact_id()");
        opened();
        await held;
      });
      await open;
      await store.write("a.md", note("one"));
      const after = await store.currentCursor();
      await store.write("a.md", note("two"));
      finish();
      await transaction;
      const watch = store.watch({ after, pollIntervalMs: 100 })[Symbol.asyncIterator]();
      const first = (await watch.next()).value;
      expect([first?.path, first?.version]).toEqual(["a.md", 2]);
      // Resuming from that change's cursor goes on after it, whatever the snapshot it carries.
      await store.write("a.md", note("three"));
      const resumed = store.watch({ after: first!.cursor, pollIntervalMs: 100 })[Symbol.asyncIterator]();
      expect((await resumed.next()).value?.version).toBe(3);
      await watch.return?.();
      await resumed.return?.();
    });
  },
);
