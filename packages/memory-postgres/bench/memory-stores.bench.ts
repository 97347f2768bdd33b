// `pnpm bench` (under `pg_virtualenv -t` for the server rows): team memory's stores side by side in one run —
// the directory store, PGlite and a PostgreSQL server on loopback. Prints a Markdown section for
// BENCHMARKS.md. Not part of `test`.

import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  createMemoryDir,
  formatMemoryFile,
  hashContent,
  MemoryConflictError,
  type MemoryStore,
} from "@unforget/memory";
import { createSqlClient, type SqlClient } from "@unforget/postgres";
import { storedEntry } from "../src/memory-rows.ts";
import { memorySqlScope, writeStatement } from "../src/memory-sql.ts";
import { createPostgresMemoryStore, type PostgresMemoryStore } from "../src/postgres-memory-store.ts";

const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 1_500);
const AGENTS = [1, 4, 16, 64];
const INDEX_SIZE = 10_000;
const note = (name: string, body: string) =>
  formatMemoryFile({ name, description: `notes about ${name}`, type: "project" }, body);

interface Backend {
  name: string;
  /** A fresh store (a new namespace or folder) and a second handle on it for another agent. */
  open(): Promise<{ store: MemoryStore; handle(): Promise<MemoryStore> }>;
  close(): Promise<void>;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const fmt = (value: number, digits = 0) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Writes per second by `agents` concurrent agents for a time window; shared: one memory, with CAS. */
async function writesPerSecond(backend: Backend, agents: number, shared: boolean) {
  const { store, handle } = await backend.open();
  const handles = await Promise.all(Array.from({ length: agents }, () => handle()));
  if (shared) await store.write("shared.md", note("shared", ""));
  let written = 0;
  let conflicts = 0;
  const until = Date.now() + WINDOW_MS;
  const started = performance.now();
  await Promise.all(
    handles.map(async (agent, index) => {
      for (let n = 0; Date.now() < until; n++) {
        if (!shared) {
          await agent.write(`agent-${index}.md`, note(`agent-${index}`, `line ${n}\n`));
          written++;
          continue;
        }
        const current = await agent.read("shared.md");
        try {
          await agent.write("shared.md", `${current.content}- ${index} ${n}\n`, {
            expectedHash: current.hash,
          });
          written++;
        } catch (error) {
          if (!(error instanceof MemoryConflictError)) throw error;
          conflicts++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1_000;
  return { perSecond: written / seconds, conflictRate: conflicts / Math.max(1, written + conflicts) };
}

async function readLatency(store: MemoryStore, name: string, rounds: number) {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    if (name === "(index)") await store.loadIndex();
    else await store.read(name);
    samples.push(performance.now() - started);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

/** 10,000 memories straight into the tables (the store's own entry, in batches), for the index reads. */
async function fillDatabase(client: SqlClient, namespace: string): Promise<void> {
  for (let start = 0; start < INDEX_SIZE; start += 500) {
    const paths: string[] = [];
    const contents: string[] = [];
    const entries: string[] = [];
    for (let index = start; index < start + 500; index++) {
      const path = `topic-${index}.md`;
      const content = note(`topic-${index}`, `Body ${index}.\n`);
      paths.push(path);
      contents.push(content);
      entries.push(storedEntry(path, content));
    }
    await client.query(
      `INSERT INTO memory (namespace, path, content, content_sha256, version, size, entry, author)
       SELECT $1, p, c, encode(sha256(convert_to(c, 'UTF8')), 'hex'), 1, octet_length(c), e::jsonb, 'bench'
       FROM unnest($2::text[], $3::text[], $4::text[]) AS t(p, c, e)`,
      [namespace, paths, contents, entries],
    );
  }
}

async function main(): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), "memory-stores-bench-"));
  const backends: Backend[] = [];
  let folders = 0;
  backends.push({
    name: "directory store",
    async open() {
      const root = join(parent, `dir-${folders++}`);
      const store = await createMemoryDir({ root, author: "agent:bench" });
      return { store, handle: () => createMemoryDir({ root, author: "agent:bench" }) };
    },
    close: async () => undefined,
  });
  let namespaces = 0;
  const databaseBackend = (name: string, client: SqlClient): Backend => ({
    name,
    async open() {
      const namespace = `team/bench/project/p${namespaces++}`;
      const store = await createPostgresMemoryStore({
        client,
        namespaces: [namespace],
        actor: "agent:bench",
      });
      return { store, handle: async () => store };
    },
    close: () => client.close(),
  });
  const pglite = await createSqlClient({ pglite: join(parent, "pglite") });
  backends.push(databaseBackend("PGlite", pglite));
  const server = process.env.PGHOST || process.env.PGPORT ? await createSqlClient({}) : undefined;
  if (server) backends.push(databaseBackend("server (loopback)", server));

  const lines: string[] = [];
  const out = (line = "") => lines.push(line);
  out(
    `Machine: \`nproc\` ${cpus().length}, ${cpus()[0]?.model.trim()}, Node ${process.version}, load average ${fmt(loadavg()[0] ?? 0, 1)} at the start. Each cell: ${WINDOW_MS} ms of writes by N agents in one process (the server's pool: 5 connections).`,
  );
  out();
  out("| store | agents | one shared memory, writes/s (conflict rate) | distinct memories, writes/s |");
  out("| --- | ---: | ---: | ---: |");
  for (const backend of backends) {
    for (const agents of AGENTS) {
      const shared = await writesPerSecond(backend, agents, true);
      const distinct = await writesPerSecond(backend, agents, false);
      out(
        `| ${backend.name} | ${agents} | ${fmt(shared.perSecond)} (${fmt(shared.conflictRate * 100)} %) | ${fmt(distinct.perSecond)} |`,
      );
    }
  }
  out();

  // Compare-and-swap with its version row against a plain last-write-wins upsert of the same row, one writer,
  // like for like: both are the raw statement on the same table with the same parameters (the store's own
  // statement for the CAS); a third column is the whole store.write (name and content checks, hashing).
  out(
    "| database | plain upsert (SQL), writes/s | CAS + version + notice (SQL), writes/s | CAS / upsert | store.write with expectedHash, writes/s | store.write / CAS SQL |",
  );
  out("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, client] of [
    ["PGlite", pglite],
    ["server (loopback)", server],
  ] as const) {
    if (!client) continue;
    // The three take turns in short slices, so that a change of the machine's load falls on all of them.
    const SLICES = 10;
    const rates = async (writers: ReadonlyArray<(round: number) => Promise<void>>) => {
      const rounds = writers.map(() => 0);
      const elapsed = writers.map(() => 0);
      for (let slice = 0; slice < SLICES; slice++) {
        for (const [index, write] of writers.entries()) {
          const until = Date.now() + WINDOW_MS / SLICES;
          const started = performance.now();
          while (Date.now() < until) await write(rounds[index]!++);
          elapsed[index]! += performance.now() - started;
        }
      }
      return rounds.map((count, index) => count / (elapsed[index]! / 1_000));
    };
    const upsertNamespace = `team/bench/project/upsert${namespaces++}`;
    const upsert = async (round: number) => {
      const content = note("m", `${round}\n`);
      await client.query(
        `INSERT INTO memory (namespace, path, content, content_sha256, version, size, entry, author)
         VALUES ($1, $2, $3, $4, 1, $5, $6::jsonb, $7)
         ON CONFLICT (namespace, path) DO UPDATE SET content = excluded.content,
           content_sha256 = excluded.content_sha256, version = memory.version + 1, size = excluded.size,
           entry = excluded.entry, author = excluded.author, changed_at = now()`,
        [
          upsertNamespace,
          "m.md",
          content,
          hashContent(content),
          Buffer.byteLength(content, "utf8"),
          storedEntry("m.md", content),
          "agent:bench",
        ],
      );
    };
    const casNamespace = `team/bench/project/cas${namespaces++}`;
    const store = await createPostgresMemoryStore({
      client,
      namespaces: [casNamespace],
      actor: "agent:bench",
    });
    const statements = memorySqlScope(client, casNamespace, "agent:bench");
    let hash = (await store.write("m.md", note("m", "start\n"))).hash;
    const cas = async (round: number) => {
      const content = note("m", `${round}\n`);
      const next = hashContent(content);
      const written = await writeStatement(
        statements,
        { expected: hash },
        {
          name: "m.md",
          content,
          hash: next,
          author: "agent:bench",
          reason: undefined,
          writeId: `bench:${randomUUID()}`,
        },
      );
      if (written === undefined)
        throw new Error("the benchmark's compare-and-swap lost: nothing else writes");
      hash = next;
    };
    const api = async (round: number) => {
      hash = (await store.write("m.md", note("m", `api ${round}\n`), { expectedHash: hash })).hash;
    };
    const [upsertRate = 0, casRate = 0, apiRate = 0] = await rates([upsert, cas, api]);
    out(
      `| ${name} | ${fmt(upsertRate)} | ${fmt(casRate)} | ${fmt(casRate / upsertRate, 2)} | ${fmt(apiRate)} | ${fmt(apiRate / casRate, 2)} |`,
    );
  }
  out();

  // Reads: one memory, and MEMORY.md over 10,000 memories.
  out(`| store | read one memory p50 / p95 (ms) | MEMORY.md of ${fmt(INDEX_SIZE)} memories p50 / p95 (ms) |`);
  out("| --- | ---: | ---: |");
  for (const backend of backends) {
    const { store } = await backend.open();
    await store.write("one.md", note("one", "Body.\n"));
    const one = await readLatency(store, "one.md", 200);
    if (backend.name === "directory store") {
      // Files straight into the folder (a dir store rewrites its catalog on every write), then one listing.
      const root = (store as Awaited<ReturnType<typeof createMemoryDir>>).root;
      await mkdir(join(root, "t"), { recursive: true });
      for (let index = 0; index < INDEX_SIZE; index++) {
        await writeFile(join(root, "t", `topic-${index}.md`), note(`topic-${index}`, "x\n"));
      }
      await store.list();
    } else {
      await fillDatabase(
        backend.name === "PGlite" ? pglite : (server as SqlClient),
        (store as PostgresMemoryStore).namespace,
      );
    }
    const index = await readLatency(store, "(index)", 20);
    out(
      `| ${backend.name} | ${fmt(one.p50, 2)} / ${fmt(one.p95, 2)} | ${fmt(index.p50)} / ${fmt(index.p95)} |`,
    );
  }
  out();

  // Notice latency: from a write's acknowledgement to a watcher's delivery, NOTIFY against polling only.
  if (server) {
    out("| watcher on the server | latency p50 / p95 (ms) |");
    out("| --- | ---: |");
    const polling = await createSqlClient({ poolSize: 3, notifications: false });
    for (const [name, client] of [
      ["NOTIFY", server],
      ["polling every 5 s (no LISTEN)", polling],
    ] as const) {
      const namespace = `team/bench/project/watch${namespaces++}`;
      const writer = await createPostgresMemoryStore({
        client: server,
        namespaces: [namespace],
        actor: "agent:w",
      });
      const reader = await createPostgresMemoryStore({ client, namespaces: [namespace], actor: "agent:r" });
      const watch = reader.watch({ after: await reader.currentCursor() })[Symbol.asyncIterator]();
      const samples: number[] = [];
      for (let round = 0; round < (name === "NOTIFY" ? 40 : 8); round++) {
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 450));
        await writer.write("w.md", note("w", `${round}\n`));
        const acknowledged = performance.now();
        await watch.next();
        samples.push(performance.now() - acknowledged);
      }
      await watch.return?.();
      out(`| ${name} | ${fmt(percentile(samples, 50))} / ${fmt(percentile(samples, 95))} |`);
    }
    await polling.close();
  }
  for (const backend of backends) await backend.close();
  await rm(parent, { recursive: true, force: true });
  process.stdout.write(`${lines.join("\n")}\n`);
}

await main();
