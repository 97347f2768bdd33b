import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashContent } from "../store/content-hash.ts";
import {
  MemoryArgumentError,
  MemoryConflictError,
  MemoryLimitError,
  MemoryNotFoundError,
  MemoryPathError,
} from "../store/memory-errors.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import { HOSTILE_MEMORY_NAMES } from "./hostile-memory-names.ts";

export interface MemoryStoreContractOptions<Store extends MemoryStore = MemoryStore> {
  /** Shown in the suite's title. */
  name: string;
  /** Called before every scenario: a fresh, empty store. */
  createStore(): Promise<Store>;
  /** Called after every scenario with what `createStore` returned. */
  cleanup?(store: Store): Promise<void>;
  /** A second client on the same store (another connection or handle), for the concurrency scenarios. */
  openSecondClient?(store: Store): Promise<MemoryStore>;
  /** The store's per-memory size cap in bytes, if it has one smaller than 1 MB. Default 100,000. */
  maxFileBytes?: number;
  /** Runs of the model-based property test. Default 15. */
  propertyRuns?: number;
}

const TIMEOUT = 30_000;
/** Twelve appenders racing by compare-and-swap retry each other's writes: a bound far above their work on a busy machine. */
const CONCURRENCY_TIMEOUT = 120_000;

function memory(name: string, description: string, body = "Body.\n"): string {
  return `---\nname: ${name}\ndescription: ${description}\ntype: project\n---\n${body}`;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/**
 * The conformance suite every `MemoryStore` must pass (the memory dir, team memory, and any networked store):
 * CRUD, typed not-found, compare-and-swap conflicts that write nothing, versions with authors, restore,
 * path safety on the names' text, NFC names, size caps, concurrent writers losing no update, and a
 * model-based property over random operation sequences. Contents round-trip byte for byte (a leading
 * byte-order mark, CRLF, unnormalised and astral text); what no store can hold faithfully — NUL, which
 * PostgreSQL's text refuses, and lone surrogates, which are not UTF-8 — is refused everywhere alike.
 */
/** What every scenario group of the contract suite shares. */
interface ContractContext<Store extends MemoryStore> {
  options: MemoryStoreContractOptions<Store>;
  /** A scenario on a fresh store, cleaned up after it. */
  withStore: (scenario: (store: Store) => Promise<void>) => () => Promise<void>;
  maxFileBytes: number;
}

export function describeMemoryStoreContract<Store extends MemoryStore>(
  options: MemoryStoreContractOptions<Store>,
): void {
  const maxFileBytes = options.maxFileBytes ?? 100_000;
  const withStore = (scenario: (store: Store) => Promise<void>) => async () => {
    const store = await options.createStore();
    try {
      await scenario(store);
    } finally {
      await options.cleanup?.(store);
    }
  };

  const context: ContractContext<Store> = { options, withStore, maxFileBytes };
  describe(`memory store contract: ${options.name}`, () => {
    contentScenarios(context);
    refusalScenarios(context);
    retryScenarios(context);
    versionScenarios(context);
    limitScenarios(context);
    propertyScenarios(context);
  });
}

/** Round trips: the exact content and its hash, byte for byte, and search over what was written. */
function contentScenarios<Store extends MemoryStore>({ options, withStore }: ContractContext<Store>): void {
  it(
    "write, read and list round-trip the exact content and its SHA-256",
    withStore(async (store) => {
      const content = memory("build", "How the build runs", "Use `pnpm build`.\n");
      const { hash } = await store.write("topics/build.md", content);
      expect(hash).toBe(hashContent(content));
      expect(await store.read("topics/build.md")).toMatchObject({ content, hash });
      const listed = await store.list();
      expect(listed.map((entry) => [entry.name, entry.hash, entry.description])).toEqual([
        ["topics/build.md", hash, "How the build runs"],
      ]);
    }),
    TIMEOUT,
  );

  it(
    "content round-trips byte for byte: a leading byte-order mark, CRLF, long lines, unnormalised and astral text",
    withStore(async (store) => {
      const other = options.openSecondClient ? await options.openSecondClient(store) : store;
      const cases: Array<[string, string]> = [
        // A text decoder's default drops a leading U+FEFF: the store must not.
        ["bom.md", `\ufeff${memory("bom", "starts with a byte-order mark")}`],
        ["bom-body.md", memory("bom", "a mark in the body", "\ufeff\ufeffzero width\ufeff no-break\n")],
        ["crlf.md", memory("crlf", "Windows line ends", "one\r\ntwo\r\n\r\nlone \r return\r\n")],
        ["long.md", memory("long", "one very long line", `${"abcdefghij".repeat(9_000)}\n`)],
        // Content is stored as written: never NFC-normalised (names are, contents are not).
        ["nfd.md", memory("nfd", "decomposed text", "cafe\u0301 and caf\u00e9\n")],
        [
          "astral.md",
          memory("astral", "astral and unusual", "𝄞 🧠 \u2028\u2029 \uFFFE\uFFFF \u0001\u007f\t\n"),
        ],
        ["no-newline.md", memory("tail", "no final newline", "ends here  \t")],
      ];
      for (const [name, content] of cases) {
        const { hash } = await store.write(name, content);
        expect(hash, name).toBe(hashContent(content));
        for (const reader of [store, other]) {
          const read = await reader.read(name);
          expect(
            read.content === content,
            `${name} read back as ${JSON.stringify(read.content.slice(0, 40))}`,
          ).toBe(true);
          expect(read.hash, name).toBe(hash);
        }
        const [version] = await store.listVersions(name);
        expect(version?.content === content, `${name}: its version's content`).toBe(true);
        expect((await store.readVersion(name, version?.id ?? "")).content === content, name).toBe(true);
        // Compare-and-swap with the hash read back works: the hash is the content's, byte for byte.
        await store.write(name, `${content}more\n`, { expectedHash: (await other.read(name)).hash });
        await store.delete(name);
        const [tombstone] = await store.listVersions(name);
        expect(tombstone?.content === `${content}more\n`, `${name}: the tombstone keeps the content`).toBe(
          true,
        );
      }
      const preamble = "\ufeff# Team memory\r\nRead me first.\r\n";
      await store.write("MEMORY.md", preamble);
      expect((await other.read("MEMORY.md")).content.startsWith(preamble)).toBe(true);
    }),
    TIMEOUT,
  );

  it(
    "search ranks by the query's words, leaves superseded memories out, and finds nothing for no words",
    withStore(async (store) => {
      await store.write("deploy.md", memory("deploy", "Staging deploys run on Fridays"));
      await store.write("db_old.md", memory("database", "The app uses MySQL"));
      await store.write(
        "db_new.md",
        "---\nname: database\ndescription: The app uses PostgreSQL now\ntype: project\nsupersedes: [db_old.md]\n---\nPostgreSQL.\n",
      );
      const deploy = await store.search("when do staging deploys run");
      expect(deploy[0]?.entry.name).toBe("deploy.md");
      const database = (await store.search("which database does the app use")).map((hit) => hit.entry.name);
      expect(database).toContain("db_new.md");
      expect(database).not.toContain("db_old.md");
      expect(await store.search("?!")).toEqual([]);
    }),
    TIMEOUT,
  );
}

/** Refusals that write nothing: a missing memory, a stale expected hash. */
function refusalScenarios<Store extends MemoryStore>({ withStore }: ContractContext<Store>): void {
  it(
    "a missing memory is a MemoryNotFoundError for read, delete and rename",
    withStore(async (store) => {
      expect(await rejection(store.read("missing.md"))).toBeInstanceOf(MemoryNotFoundError);
      expect(await rejection(store.delete("missing.md"))).toBeInstanceOf(MemoryNotFoundError);
      expect(await rejection(store.rename("missing.md", "other.md"))).toBeInstanceOf(MemoryNotFoundError);
    }),
    TIMEOUT,
  );

  it(
    "a write with a stale expected hash is a MemoryConflictError and writes nothing",
    withStore(async (store) => {
      const first = await store.write("a.md", memory("a", "one"));
      await store.write("a.md", memory("a", "two"), { expectedHash: first.hash });
      const conflict = await rejection(
        store.write("a.md", memory("a", "three"), { expectedHash: first.hash }),
      );
      expect(conflict).toBeInstanceOf(MemoryConflictError);
      expect((conflict as MemoryConflictError).actualHash).toBe(hashContent(memory("a", "two")));
      expect(await rejection(store.write("a.md", memory("a", "x"), { expectedHash: null }))).toBeInstanceOf(
        MemoryConflictError,
      );
      expect(await rejection(store.delete("a.md", { expectedHash: first.hash }))).toBeInstanceOf(
        MemoryConflictError,
      );
      expect((await store.read("a.md")).content).toBe(memory("a", "two"));
      // A stale hash is a conflict even when the content equals what is there: the caller computed it
      // from a state that is gone (two counters incremented from one read would both "succeed").
      expect(
        await rejection(store.write("a.md", memory("a", "two"), { expectedHash: first.hash })),
      ).toBeInstanceOf(MemoryConflictError);
      // The same content with the current hash succeeds and makes no new version.
      const versionsBefore = (await store.listVersions("a.md")).length;
      const same = await store.write("a.md", memory("a", "two"), {
        expectedHash: hashContent(memory("a", "two")),
      });
      expect(same.hash).toBe(hashContent(memory("a", "two")));
      expect(await store.listVersions("a.md")).toHaveLength(versionsBefore);
    }),
    TIMEOUT,
  );
}

/** Concurrent compare-and-swap counters, and retries with one write id. */
function retryScenarios<Store extends MemoryStore>({ options, withStore }: ContractContext<Store>): void {
  it(
    "concurrent read-increment-write counters with expectedHash reach the exact total",
    withStore(async (store) => {
      const clients: MemoryStore[] = [store];
      for (let index = 1; index < 4; index++) {
        clients.push(options.openSecondClient ? await options.openSecondClient(store) : store);
      }
      const counter = (value: number) => memory("counter", "a shared counter", `${value}\n`);
      await store.write("counter.md", counter(0));
      const increments = 25;
      let conflicts = 0;
      const increment = async (client: MemoryStore) => {
        for (;;) {
          const current = await client.read("counter.md");
          const value = Number(current.content.split("---\n")[2]?.trim());
          try {
            await client.write("counter.md", counter(value + 1), { expectedHash: current.hash });
            return;
          } catch (error) {
            if (!(error instanceof MemoryConflictError)) throw error;
            conflicts++;
          }
        }
      };
      await Promise.all(
        clients.map(async (client) => {
          for (let index = 0; index < increments; index++) await increment(client);
        }),
      );
      expect((await store.read("counter.md")).content).toBe(counter(clients.length * increments));
      expect(await store.listVersions("counter.md")).toHaveLength(clients.length * increments + 1);
      // Conflicts are how the race shows; a store where none happened did not test it.
      expect(conflicts).toBeGreaterThan(0);
    }),
    120_000,
  );

  it(
    "a retry with the same writeId resolves to the first result and makes no second version",
    withStore(async (store) => {
      const first = await store.write("a.md", memory("a", "one"));
      const writeId = "0b7f8c1e-5d7a-4a57-9a53-2f0a6c1b9e11";
      const written = await store.write("a.md", memory("a", "two"), { expectedHash: first.hash, writeId });
      // The reply was lost; the caller retries the same change with the hash it had.
      const retried = await store.write("a.md", memory("a", "two"), { expectedHash: first.hash, writeId });
      expect(retried).toEqual(written);
      expect(
        (await store.listVersions("a.md")).filter((version) => version.operation === "write"),
      ).toHaveLength(2);
      // Another change under the same writeId is refused: the id names one logical change.
      expect(
        await rejection(store.write("a.md", memory("a", "three"), { expectedHash: written.hash, writeId })),
      ).toBeInstanceOf(MemoryArgumentError);
      const deleteId = "5c0d2b8e-2f6b-4e0a-8d0e-7a1f3c9b4d22";
      await store.delete("a.md", { expectedHash: written.hash, writeId: deleteId });
      await store.delete("a.md", { expectedHash: written.hash, writeId: deleteId });
      expect(await rejection(store.read("a.md"))).toBeInstanceOf(MemoryNotFoundError);
    }),
    TIMEOUT,
  );
}

/** Malformed arguments, redaction and pruning, kept versions, rename. */
function versionScenarios<Store extends MemoryStore>({ withStore }: ContractContext<Store>): void {
  it(
    "malformed arguments are MemoryArgumentErrors before anything is written",
    withStore(async (store) => {
      const bad: Array<[string, Promise<unknown>]> = [
        ["expectedHash", store.write("a.md", memory("a", "x"), { expectedHash: "abc" })],
        ["expectedHash", store.write("a.md", memory("a", "x"), { expectedHash: "A".repeat(64) })],
        ["writeId", store.write("a.md", memory("a", "x"), { writeId: "" })],
        ["content", store.write("a.md", memory("a", "nul \u0000 inside"))],
        ["content", store.write("a.md", memory("a", "lone \ud800 surrogate"))],
      ];
      for (const [argument, attempt] of bad) {
        const error = await rejection(attempt);
        expect(error, argument).toBeInstanceOf(MemoryArgumentError);
        expect((error as MemoryArgumentError).argument).toBe(argument);
      }
      expect(await rejection(store.read("a.md"))).toBeInstanceOf(MemoryNotFoundError);
      await store.write("a.md", memory("a", "x"));
      expect(await rejection(store.readVersion("a.md", "no-such-version"))).toBeInstanceOf(
        MemoryNotFoundError,
      );
    }),
    TIMEOUT,
  );

  it(
    "redaction blanks a version's content and keeps the version; pruning never touches the head",
    withStore(async (store) => {
      await store.write("a.md", memory("a", "one"), { author: "session:s1" });
      await store.write("a.md", memory("a", "two"));
      await store.write("a.md", memory("a", "three"));
      const [head, second, oldest] = await store.listVersions("a.md");
      if (!head || !second || !oldest) throw new Error("three versions were expected");
      expect(await rejection(store.redactVersion("a.md", head.id))).toBeInstanceOf(MemoryArgumentError);
      const redacted = await store.redactVersion("a.md", oldest.id, { reason: "held a customer name" });
      expect(redacted.content).toBe("");
      expect(redacted.redactedAt).toBeTruthy();
      const kept = await store.readVersion("a.md", oldest.id);
      expect([kept.content, kept.author, kept.operation]).toEqual(["", "session:s1", "write"]);
      expect(await rejection(store.restore("a.md", oldest.id))).toBeInstanceOf(MemoryArgumentError);
      expect(await store.pruneVersions("a.md", { keep: 1 })).toEqual({ removed: 2 });
      expect((await store.listVersions("a.md")).map((version) => version.id)).toEqual([head.id]);
      expect((await store.read("a.md")).content).toBe(memory("a", "three"));
      expect(await rejection(store.pruneVersions("a.md", { keep: 0 }))).toBeInstanceOf(MemoryArgumentError);
    }),
    TIMEOUT,
  );

  it(
    "every change keeps a version with its author, a delete is restorable, and listing hides versions",
    withStore(async (store) => {
      await store.write("a.md", memory("a", "one"), { author: "session:s1" });
      await store.write("a.md", memory("a", "two"), { author: "agent:a2" });
      await store.delete("a.md", { author: "user" });
      const versions = await store.listVersions("a.md");
      expect(versions.map((version) => [version.operation, version.author])).toEqual([
        ["delete", "user"],
        ["write", "agent:a2"],
        ["write", "session:s1"],
      ]);
      expect(versions[0]?.content).toBe(memory("a", "two"));
      expect(await store.list()).toEqual([]);
      // A deleted memory still has versions: a copy or backup finds it.
      expect(await store.versionedNames()).toEqual(["a.md"]);
      const first = versions[2];
      if (!first) throw new Error("the first version is missing");
      await store.restore("a.md", first.id, { expectedHash: null });
      expect((await store.read("a.md")).content).toBe(memory("a", "one"));
    }),
    TIMEOUT,
  );

  it(
    "rename moves a memory and refuses to overwrite an existing one",
    withStore(async (store) => {
      await store.write("a.md", memory("a", "alpha"));
      await store.write("b.md", memory("b", "beta"));
      expect(await rejection(store.rename("a.md", "b.md"))).toBeInstanceOf(MemoryConflictError);
      await store.rename("a.md", "moved/a.md");
      expect((await store.list()).map((entry) => entry.name)).toEqual(["b.md", "moved/a.md"]);
      expect((await store.read("moved/a.md")).content).toBe(memory("a", "alpha"));
    }),
    TIMEOUT,
  );
}

/** Names, the size cap, and appenders on two clients. */
function limitScenarios<Store extends MemoryStore>({
  options,
  withStore,
  maxFileBytes,
}: ContractContext<Store>): void {
  it(
    "names: hostile ones are refused with MemoryPathError, NFC spellings are one memory",
    withStore(async (store) => {
      for (const name of HOSTILE_MEMORY_NAMES) {
        expect(await rejection(store.write(name, memory("x", "x"))), JSON.stringify(name)).toBeInstanceOf(
          MemoryPathError,
        );
        expect(await rejection(store.read(name)), JSON.stringify(name)).toBeInstanceOf(MemoryPathError);
      }
      await store.write("cafe\u0301.md", memory("cafe", "decomposed"));
      expect((await store.read("caf\u00e9.md")).content).toBe(memory("cafe", "decomposed"));
      expect((await store.list()).map((entry) => entry.name)).toEqual(["caf\u00e9.md"]);
    }),
    TIMEOUT,
  );

  it(
    "a memory over the size cap is a MemoryLimitError and is not written",
    withStore(async (store) => {
      const content = memory("big", "big", "x".repeat(maxFileBytes + 1));
      expect(await rejection(store.write("big.md", content))).toBeInstanceOf(MemoryLimitError);
      expect(await rejection(store.read("big.md"))).toBeInstanceOf(MemoryNotFoundError);
    }),
    TIMEOUT,
  );

  it(
    "concurrent compare-and-swap appenders on two clients lose no update",
    withStore(async (store) => {
      const other = options.openSecondClient ? await options.openSecondClient(store) : store;
      await store.write("log.md", memory("log", "appends"));
      const append = async (client: MemoryStore, line: string) => {
        for (;;) {
          const current = await client.read("log.md");
          try {
            await client.write("log.md", `${current.content}${line}\n`, { expectedHash: current.hash });
            return;
          } catch (error) {
            if (!(error instanceof MemoryConflictError)) throw error;
          }
        }
      };
      const lines = Array.from({ length: 12 }, (_, index) => `- line ${index}`);
      await Promise.all(lines.map((line, index) => append(index % 2 === 0 ? store : other, line)));
      const { content } = await store.read("log.md");
      for (const line of lines) expect(content).toContain(`${line}\n`);
      expect(await store.listVersions("log.md")).toHaveLength(lines.length + 1);
    }),
    CONCURRENCY_TIMEOUT,
  );
}

/** The model-based property: random operation sequences against a plain map. */
function propertyScenarios<Store extends MemoryStore>({ options, withStore }: ContractContext<Store>): void {
  it(
    "matches a plain map under random sequences of writes, deletes and renames",
    withStore(async (store) => {
      const names = ["a.md", "b.md", "t/c.md"];
      const operation = fc.oneof(
        fc.record({
          kind: fc.constant("write" as const),
          name: fc.constantFrom(...names),
          text: fc.string(),
        }),
        fc.record({ kind: fc.constant("delete" as const), name: fc.constantFrom(...names) }),
        fc.record({
          kind: fc.constant("rename" as const),
          name: fc.constantFrom(...names),
          to: fc.constantFrom(...names),
        }),
      );
      let round = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { maxLength: 8 }), async (operations) => {
          round++;
          const prefix = `r${round}/`;
          const model = new Map<string, string>();
          for (const step of operations) {
            const name = prefix + step.name;
            if (step.kind === "write") {
              const content = memory("m", "random", `${step.text.replace(/\r/g, "")}\n`);
              await store.write(name, content);
              model.set(name, content);
            } else if (step.kind === "delete") {
              const error = await rejection(store.delete(name));
              if (model.has(name)) expect(error).toBeUndefined();
              else expect(error).toBeInstanceOf(MemoryNotFoundError);
              model.delete(name);
            } else {
              const to = prefix + step.to;
              const error = await rejection(store.rename(name, to));
              if (!model.has(name)) expect(error).toBeInstanceOf(MemoryNotFoundError);
              else if (model.has(to)) expect(error).toBeInstanceOf(MemoryConflictError);
              else {
                expect(error).toBeUndefined();
                model.set(to, model.get(name) as string);
                model.delete(name);
              }
            }
          }
          const listed = (await store.list()).filter((entry) => entry.name.startsWith(prefix));
          expect(listed.map((entry) => entry.name).sort()).toEqual([...model.keys()].sort());
          for (const [name, content] of model) expect((await store.read(name)).content).toBe(content);
        }),
        { numRuns: options.propertyRuns ?? 15 },
      );
    }),
    120_000,
  );
}
