import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A PostgreSQL server the test run started (pg_virtualenv exports PG* for it), with its fault switches. */
export interface PgTestServer {
  /** `postgres://…` for the server's default database (credentials from PG*). */
  readonly url: string;
  /** `host` and `port`, for a proxy in front of it. */
  readonly host: string;
  readonly port: number;
  /** A fresh database for one test file (its URL), and how to drop it. */
  createDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }>;
  /**
   * Restarts the server through pg_ctlcluster: `immediate` kills it without a checkpoint (a crash, as
   * `-m immediate`), `fast` disconnects clients cleanly. Resolves when it accepts connections again.
   */
  restart(options?: { mode?: "immediate" | "fast" }): Promise<void>;
  /** Stops the server (until `start`), for longer outages. */
  stop(options?: { mode?: "immediate" | "fast" }): Promise<void>;
  start(): Promise<void>;
}

let announced = false;

/**
 * The server configured in the environment (PGHOST / PGPORT, as pg_virtualenv exports them), or `undefined`
 * when none is: server tests then skip, and this prints one line saying so. With `CI=true` a missing server is
 * an error, never a skip: CI must run every test.
 */
export function pgServerFromEnvironment(
  env: Record<string, string | undefined> = process.env,
): PgTestServer | undefined {
  if (env.PGHOST === undefined && env.PGPORT === undefined) {
    if (env.CI === "true" || env.CI === "1") {
      throw new Error(
        "CI is set but no PostgreSQL server is configured (PGHOST / PGPORT are unset): run the tests under `pg_virtualenv -t` as .ci/run does, never skip them in CI.",
      );
    }
    if (!announced) {
      announced = true;
      process.stdout.write(
        "PostgreSQL server tests skipped: no server configured (run under `pg_virtualenv -t -o max_connections=200`, or set PGHOST/PGPORT).\n",
      );
    }
    return undefined;
  }
  return serverAt({
    host: env.PGHOST ?? "localhost",
    port: Number(env.PGPORT ?? 5432),
    user: env.PGUSER ?? "postgres",
    password: env.PGPASSWORD ?? "",
    database: env.PGDATABASE ?? env.PGUSER ?? "postgres",
    env,
  });
}

interface ServerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  env: Record<string, string | undefined>;
}

function serverAt(address: ServerAddress): PgTestServer {
  const { host, port, user, password, database } = address;
  const env = { ...address.env, PGHOST: host, PGPORT: String(port), PGUSER: user, PGPASSWORD: password };
  const credentials = `${encodeURIComponent(user)}${password === "" ? "" : `:${encodeURIComponent(password)}`}`;
  const urlFor = (name: string) => `postgres://${credentials}@${host}:${port}/${encodeURIComponent(name)}`;
  const psql = (sql: string) =>
    run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", sql], { env });

  const cluster = async (): Promise<{ version: string; name: string }> => {
    const { stdout } = await run("pg_lsclusters", ["--no-header"], { env });
    for (const line of stdout.split("\n")) {
      const [version, name, clusterPort] = line.trim().split(/\s+/);
      if (version && name && Number(clusterPort) === port) return { version, name };
    }
    throw new Error(
      `No cluster listens on port ${port} (pg_lsclusters): restart needs the server to be local.`,
    );
  };
  const control = async (action: "restart" | "stop" | "start", mode?: string) => {
    const { version, name } = await cluster();
    const args = [version, name, action, ...(mode === undefined ? [] : ["-m", mode])];
    await run("pg_ctlcluster", args, { env });
  };
  const ready = async () => {
    for (let attempt = 0; attempt < 300; attempt++) {
      try {
        await run("pg_isready", ["-q", "-h", host, "-p", String(port)], { env });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`PostgreSQL on ${host}:${port} did not accept connections again within 30 s.`);
  };

  return {
    url: urlFor(database),
    host,
    port,
    async createDatabase() {
      const name = `unforget_test_${randomBytes(6).toString("hex")}`;
      await psql(`CREATE DATABASE ${name}`);
      return {
        name,
        url: urlFor(name),
        drop: async () => {
          await psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        },
      };
    },
    async restart(options = {}) {
      await control("restart", options.mode ?? "immediate");
      await ready();
    },
    async stop(options = {}) {
      await control("stop", options.mode ?? "immediate");
    },
    async start() {
      await control("start");
      await ready();
    },
  };
}

/** A server of one's own, dropped with `close`. */
export interface PrivatePgServer extends PgTestServer {
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * A cluster of its own (pg_createcluster, trust auth on a free port), for tests that restart or stop the
 * server: they must not disturb the other test files that share the run's server. Needs the server's tools
 * on this machine (as pg_virtualenv has). Its folder is made readable to the `postgres` user, which a
 * root-owned `mkdtemp` folder is not. Takes a few seconds (initdb).
 */
export async function createPrivatePgServer(
  env: Record<string, string | undefined> = process.env,
): Promise<PrivatePgServer> {
  const { stdout } = await run("pg_lsclusters", ["--no-header"], { env });
  const version = env.PGVERSION ?? stdout.trim().split(/\s+/)[0];
  if (!version)
    throw new Error("No PostgreSQL version found (PGVERSION, pg_lsclusters): install postgresql-15.");
  const folder = await mkdtemp(join(tmpdir(), "unforget-pg-"));
  await chmod(folder, 0o755);
  const name = `unforget_${randomBytes(4).toString("hex")}`;
  const port = await freePort();
  await run(
    "pg_createcluster",
    [
      version,
      name,
      "-d",
      join(folder, "data"),
      "-l",
      join(folder, "server.log"),
      "-p",
      String(port),
      "--start",
      "--",
      "--auth=trust",
    ],
    { env },
  );
  const server = serverAt({
    host: "127.0.0.1",
    port,
    user: "postgres",
    password: "",
    database: "postgres",
    env,
  });
  return {
    ...server,
    async close() {
      await run("pg_dropcluster", ["--stop", version, name], { env }).catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}
