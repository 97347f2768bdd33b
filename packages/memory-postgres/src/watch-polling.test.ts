import { createSqlClient } from "@unforget/postgres";
import { describe, expect, it } from "vitest";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore } from "./postgres-memory-store.ts";

describe.skipIf(server === undefined)("a watch without LISTEN (PgBouncer transaction pooling)", () => {
  const database = useServerDatabase();

  it("polls, warns once, and still delivers every change", async () => {
    const pooled = await createSqlClient({ url: database().url, poolSize: 2, notifications: false });
    try {
      const namespace = freshNamespace();
      const writer = await createPostgresMemoryStore({
        client: database().client,
        namespaces: [namespace],
        actor: "agent:w",
      });
      const reader = await createPostgresMemoryStore({
        client: pooled,
        namespaces: [namespace],
        actor: "agent:r",
      });
      const warnings: string[] = [];
      const watch = reader
        .watch({
          after: await reader.currentCursor(),
          pollIntervalMs: 100,
          onWarning: (message) => warnings.push(message),
        })
        [Symbol.asyncIterator]();
      const next = watch.next();
      await writer.write("a.md", "---\nname: a\ndescription: a\ntype: project\n---\n");
      await writer.write("a.md", "---\nname: a\ndescription: b\ntype: project\n---\n");
      expect([(await next).value?.version, (await watch.next()).value?.version]).toEqual([1, 2]);
      await watch.return?.();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/polls every 100 ms/);
    } finally {
      await pooled.close();
    }
  });
});
