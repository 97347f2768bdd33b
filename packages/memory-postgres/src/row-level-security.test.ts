import { randomBytes } from "node:crypto";
import { MemoryNotFoundError } from "@unforget/memory";
import { createSqlClient, type SqlClient, SqlError } from "@unforget/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { rowLevelSecuritySql } from "./memory-schema.ts";
import { changeChannel } from "./memory-sql.ts";
import { createPostgresMemoryStore } from "./postgres-memory-store.ts";

const note = "---\nname: n\ndescription: a note\ntype: project\n---\nBody.\n";
const MEMORY_TABLES =
  "memory, memory_version, memory_index, memory_proposal, memory_dream, memory_dream_report";

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe.skipIf(server === undefined)("the optional row-level security", () => {
  const database = useServerDatabase();
  const suffix = randomBytes(4).toString("hex");
  // web: the widest privileges a careless operator could give (every table of the schema); data: the
  // documented writer's; viewer: the documented reader's.
  const roles = {
    web: `memory_web_${suffix}`,
    data: `memory_data_${suffix}`,
    viewer: `memory_viewer_${suffix}`,
  };
  const namespaces = { web: freshNamespace(), data: freshNamespace() };
  const clients: SqlClient[] = [];

  beforeAll(async () => {
    const { client } = database();
    // The owner migrates and applies the policy; the agents connect as roles granted one namespace each.
    await createPostgresMemoryStore({ client, namespaces: [namespaces.web], actor: "service:setup" });
    await client.query(await rowLevelSecuritySql());
    for (const role of Object.values(roles)) await client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${roles.web}`);
    await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${MEMORY_TABLES} TO ${roles.data}`);
    await client.query(`GRANT SELECT ON ${MEMORY_TABLES}, unforget_schema_migration TO ${roles.data}`);
    await client.query(`GRANT SELECT ON ${MEMORY_TABLES}, unforget_schema_migration TO ${roles.viewer}`);
    await client.query(
      "INSERT INTO memory_namespace_grant (role_name, namespace) VALUES ($1, $2), ($3, $4), ($5, $4)",
      [roles.web, namespaces.web, roles.data, namespaces.data, roles.viewer],
    );
    await client.query("UPDATE memory_namespace_grant SET access = 'read' WHERE role_name = $1", [
      roles.viewer,
    ]);
  });

  afterAll(async () => {
    for (const opened of clients) await opened.close();
    const { client } = database();
    for (const role of Object.values(roles)) {
      await client.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await client.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    }
  });

  const connectAs = async (role: string) => {
    const url = new URL(database().url);
    url.username = role;
    url.password = "pw";
    const client = await createSqlClient({ url: url.toString(), poolSize: 1 });
    clients.push(client);
    return client;
  };

  it("lets each role reach only its granted namespace, whatever its store claims", async () => {
    // A store misconfigured with both namespaces: the database still refuses what the role was not granted.
    const web = await createPostgresMemoryStore({
      client: await connectAs(roles.web),
      namespaces: [namespaces.web, namespaces.data],
      actor: "agent:web",
    });
    const data = await createPostgresMemoryStore({
      client: await connectAs(roles.data),
      namespaces: [namespaces.data],
      actor: "agent:data",
    });
    await web.write("web.md", note);
    await data.write("data.md", note);
    expect((await web.list()).map((entry) => entry.name)).toEqual(["web.md"]);
    const intruder = web.inNamespace(namespaces.data);
    expect(await intruder.list()).toEqual([]);
    await expect(intruder.read("data.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
    const refused = await rejection(intruder.write("planted.md", note));
    expect(refused).toBeInstanceOf(SqlError);
    expect((refused as SqlError).sqlState).toBe("42501");
    expect((await data.list()).map((entry) => entry.name)).toEqual(["data.md"]);
    expect(await data.listVersions("web.md")).toEqual([]);
  });

  it("a writer cannot widen its own namespaces or narrow another role's, even with every table privilege", async () => {
    const { client: owner } = database();
    const grantsOf = async (role: string) =>
      (
        await owner.query<{ namespace: string }>(
          "SELECT namespace FROM memory_namespace_grant WHERE role_name = $1 ORDER BY namespace",
          [role],
        )
      ).rows.map((row) => row.namespace);
    const before = { web: await grantsOf(roles.web), data: await grantsOf(roles.data) };
    for (const role of [roles.web, roles.data]) {
      const writer = await connectAs(role);
      const other = role === roles.web ? namespaces.data : namespaces.web;
      // Each way a role could try to change who sees what: add a grant, move one, take another's.
      const attempts = [
        () =>
          writer.query(
            "INSERT INTO memory_namespace_grant (role_name, namespace) VALUES (current_user, $1)",
            [other],
          ),
        () =>
          writer.query("UPDATE memory_namespace_grant SET namespace = $1 WHERE role_name = current_user", [
            other,
          ]),
        () => writer.query("DELETE FROM memory_namespace_grant WHERE role_name <> current_user"),
      ];
      for (const attempt of attempts) {
        const outcome = await attempt().then(
          (result) => result.rowCount,
          (error: unknown) => (error instanceof SqlError ? error.sqlState : error),
        );
        expect([0, "42501"], role).toContain(outcome);
      }
      // It sees its own grants and nobody else's.
      const seen = await writer.query<{ role_name: string }>("SELECT role_name FROM memory_namespace_grant");
      expect(new Set(seen.rows.map((row) => row.role_name))).toEqual(new Set([role]));
      const store = await createPostgresMemoryStore({
        client: writer,
        namespaces: [other],
        actor: "agent:x",
      });
      expect(await store.list()).toEqual([]);
    }
    expect({ web: await grantsOf(roles.web), data: await grantsOf(roles.data) }).toEqual(before);
  });

  it("a reader reads its namespace and changes nothing in it", async () => {
    const data = await createPostgresMemoryStore({
      client: await connectAs(roles.data),
      namespaces: [namespaces.data],
      actor: "agent:data",
    });
    await data.write("shared.md", note);
    const viewer = await createPostgresMemoryStore({
      client: await connectAs(roles.viewer),
      namespaces: [namespaces.data],
      actor: "agent:viewer",
      migrate: false,
    });
    expect((await viewer.read("shared.md")).content).toBe(note);
    for (const attempt of [
      () => viewer.write("planted.md", note),
      () => viewer.write("shared.md", `${note}more\n`),
      () => viewer.delete("shared.md"),
    ]) {
      expect(await rejection(attempt())).toBeInstanceOf(Error);
    }
    expect((await data.read("shared.md")).content).toBe(note);
    expect((await data.listVersions("shared.md")).length).toBe(1);
    expect((await data.list()).map((entry) => entry.name)).toEqual(["data.md", "shared.md"]);
  });

  it("change notices tell a role nothing of a namespace it was not granted", async () => {
    const web = await createPostgresMemoryStore({
      client: await connectAs(roles.web),
      namespaces: [namespaces.web],
      actor: "agent:web",
    });
    const data = await createPostgresMemoryStore({
      client: await connectAs(roles.data),
      namespaces: [namespaces.data],
      actor: "agent:data",
    });
    // The data role listens where notices went before (one channel for all) and on every namespace's own.
    const listener = await connectAs(roles.data);
    const heard: string[] = [];
    for (const channel of [
      "unforget_memory",
      changeChannel(namespaces.web),
      changeChannel(namespaces.data),
    ]) {
      await listener.listen(channel, (payload) => heard.push(payload));
    }
    const changes = web.watch({ after: await web.currentCursor() })[Symbol.asyncIterator]();
    await web.write("acquisition-plan.md", note);
    await data.write("roadmap.md", note);
    // Its own change, and the watch of the web role still sees the web change.
    expect((await changes.next()).value).toMatchObject({ path: "acquisition-plan.md", op: "write" });
    await changes.return?.();
    const [version] = await web.listVersions("acquisition-plan.md");
    for (let waited = 0; heard.length < 2 && waited < 100; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(heard.length).toBeGreaterThanOrEqual(2);
    for (const payload of heard) {
      expect(payload).not.toContain(namespaces.web);
      expect(payload).not.toContain("acquisition-plan");
      expect(payload).not.toContain(`"${version?.id}"`);
    }
  });
});
