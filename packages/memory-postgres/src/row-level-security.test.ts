import { randomBytes } from "node:crypto";
import { MemoryNotFoundError } from "@unforget/memory";
import { createSqlClient, SqlError } from "@unforget/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { rowLevelSecuritySql } from "./memory-schema.ts";
import { createPostgresMemoryStore } from "./postgres-memory-store.ts";

const note = "---\nname: n\ndescription: a note\ntype: project\n---\nBody.\n";

describe.skipIf(server === undefined)("the optional row-level security", () => {
  const database = useServerDatabase();
  const suffix = randomBytes(4).toString("hex");
  const roles = { web: `memory_web_${suffix}`, data: `memory_data_${suffix}` };
  const namespaces = { web: freshNamespace(), data: freshNamespace() };

  beforeAll(async () => {
    const { client } = database();
    // The owner migrates and applies the policy; the agents connect as roles granted one namespace each.
    await createPostgresMemoryStore({ client, namespaces: [namespaces.web], actor: "service:setup" });
    await client.query(await rowLevelSecuritySql());
    for (const [team, role] of Object.entries(roles)) {
      await client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
      await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await client.query("INSERT INTO memory_namespace_grant (role_name, namespace) VALUES ($1, $2)", [
        role,
        namespaces[team as keyof typeof namespaces],
      ]);
    }
  });

  afterAll(async () => {
    const { client } = database();
    for (const role of Object.values(roles)) {
      await client.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await client.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    }
  });

  const connectAs = (role: string) => {
    const url = new URL(database().url);
    url.username = role;
    url.password = "pw";
    return createSqlClient({ url: url.toString(), poolSize: 1 });
  };

  it("lets each role reach only its granted namespace, whatever its store claims", async () => {
    const webClient = await connectAs(roles.web);
    const dataClient = await connectAs(roles.data);
    try {
      // A store misconfigured with both namespaces: the database still refuses what the role was not granted.
      const web = await createPostgresMemoryStore({
        client: webClient,
        namespaces: [namespaces.web, namespaces.data],
        actor: "agent:web",
      });
      const data = await createPostgresMemoryStore({
        client: dataClient,
        namespaces: [namespaces.data],
        actor: "agent:data",
      });
      await web.write("web.md", note);
      await data.write("data.md", note);
      expect((await web.list()).map((entry) => entry.name)).toEqual(["web.md"]);
      const intruder = web.inNamespace(namespaces.data);
      expect(await intruder.list()).toEqual([]);
      await expect(intruder.read("data.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
      const refused = await intruder.write("planted.md", note).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SqlError);
      expect((refused as SqlError).sqlState).toBe("42501");
      expect((await data.list()).map((entry) => entry.name)).toEqual(["data.md"]);
      expect(await data.listVersions("web.md")).toEqual([]);
    } finally {
      await webClient.close();
      await dataClient.close();
    }
  });
});
