import { UnforgetError } from "@unforget/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TaskStateStore } from "../backend/task-state-store.ts";
import { TASK_TYPES, type TaskRecord, type TaskRecordInit } from "../task/task-record.ts";
import { fixturePerTest } from "./fixture-per-test.ts";

/** One scenario's storage: an empty store and a second handle on the same storage. */
export interface TaskStateStoreFixture {
  /** The store under test, empty. */
  store: TaskStateStore;
  /** Another independent handle on the same storage, as a second process or connection would open it. */
  openPeer(): Promise<TaskStateStore>;
  /** Called after the scenario: release the storage. */
  teardown(): Promise<void>;
}

export interface TaskStateStoreContractOptions {
  /** Used in the describe title. */
  name: string;
  /** Called before every scenario. */
  setup(): Promise<TaskStateStoreFixture>;
  /** Runs of the round-trip property (default 25; a networked store may want fewer). */
  propertyRuns?: number;
}

let counter = 0;

/** A minimal valid record with a fresh id. */
export function sampleTaskRecord(overrides: Partial<TaskRecordInit> = {}): TaskRecordInit {
  counter += 1;
  return {
    id: `contract-${process.pid}-${counter}`,
    type: "local_bash",
    description: "echo hello",
    status: "running",
    createdAt: 1_700_000_000_000 + counter,
    pending: [],
    ...overrides,
  };
}

const arbitraryRecord: fc.Arbitrary<TaskRecordInit> = fc.record(
  {
    id: fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,40}$/),
    type: fc.constantFrom(...TASK_TYPES),
    description: fc.string({ unit: "grapheme", maxLength: 200 }),
    status: fc.constantFrom("running", "completed", "failed", "killed"),
    createdAt: fc.integer({ min: 0, max: 2 ** 45 }),
    endedAt: fc.integer({ min: 0, max: 2 ** 45 }),
    exitCode: fc.integer({ min: 0, max: 255 }),
    error: fc.string({ maxLength: 80 }),
    result: fc.string({ unit: "grapheme", maxLength: 300 }),
    process: fc.record({
      pid: fc.integer({ min: 1, max: 2 ** 22 }),
      startTime: fc.stringMatching(/^[0-9]{1,12}$/),
    }),
    deadlineNotified: fc.boolean(),
    pending: fc.array(
      fc.record({
        kind: fc.constant("message" as const),
        taskId: fc.constant("x"),
        type: fc.constant("local_agent" as const),
        description: fc.string({ maxLength: 20 }),
        at: fc.integer({ min: 0, max: 2 ** 45 }),
        outputPath: fc.constant("/tmp/x"),
        from: fc.string({ maxLength: 10 }),
        text: fc.string({ unit: "grapheme", maxLength: 50 }),
      }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ["id", "type", "description", "status", "createdAt", "pending"] },
) as fc.Arbitrary<TaskRecordInit>;

function withoutVersion(record: TaskRecord): TaskRecordInit {
  const { version: _version, ...rest } = record;
  return rest;
}

/** Increments the record's numeric `result` with a compare-and-swap retry loop; resolves the attempts made. */
async function increment(store: TaskStateStore, id: string): Promise<number> {
  for (let attempts = 1; ; attempts++) {
    const current = await store.get(id);
    if (current === undefined) throw new Error(`record ${id} vanished`);
    const next = { ...withoutVersion(current), result: String(Number(current.result ?? "0") + 1) };
    if ((await store.update(id, current.version, next)) !== undefined) return attempts;
  }
}

/**
 * The conformance suite every task-state store passes (the file store, and any queue-backed store). It
 * checks that records round-trip exactly, that ids are unique, and that `update` is a compare-and-swap that
 * loses nothing when two handles on the same storage write at once.
 */
/** What one handle on the store must do: round-trips, unique ids, typed errors, compare-and-swap. */
function describeOneHandle(fixture: () => TaskStateStoreFixture, propertyRuns: number): void {
  it("create stores version 1 and get returns the record unchanged", async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(arbitraryRecord, async (record) => {
        fc.pre(!seen.has(record.id));
        seen.add(record.id);
        const created = await fixture().store.create(record);
        expect(created.version).toBe(1);
        const read = await fixture().store.get(record.id);
        expect(read).toEqual({ ...record, version: 1 });
      }),
      { numRuns: propertyRuns },
    );
  });

  it("create rejects an id that exists, and the first record stays", async () => {
    const record = sampleTaskRecord();
    await fixture().store.create(record);
    const error = await fixture()
      .store.create({ ...record, description: "other" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnforgetError);
    expect((error as UnforgetError).code).toBe("task_state");
    expect((await fixture().store.get(record.id))?.description).toBe(record.description);
  });

  it("an unknown id: get resolves undefined, update rejects with task_not_found", async () => {
    expect(await fixture().store.get("no-such-task")).toBeUndefined();
    const error = await fixture()
      .store.update("no-such-task", 1, sampleTaskRecord())
      .catch((e: unknown) => e);
    expect((error as UnforgetError).code).toBe("task_not_found");
  });

  it("update is a compare-and-swap: the current version wins, a stale one changes nothing", async () => {
    const record = sampleTaskRecord();
    await fixture().store.create(record);
    const second = await fixture().store.update(record.id, 1, {
      ...record,
      status: "completed",
      exitCode: 0,
    });
    expect(second).toMatchObject({ version: 2, status: "completed", exitCode: 0 });
    expect(await fixture().store.update(record.id, 1, { ...record, status: "failed" })).toBeUndefined();
    expect(await fixture().store.get(record.id)).toEqual({
      ...record,
      status: "completed",
      exitCode: 0,
      version: 2,
    });
    const third = await fixture().store.update(record.id, 2, { ...record, status: "killed" });
    expect(third?.version).toBe(3);
  });
}

/** What two handles on the same storage must see: one winner per version, no lost update, one list. */
function describeTwoHandles(fixture: () => TaskStateStoreFixture): void {
  it("of concurrent updates from one version exactly one wins, across two handles", async () => {
    const peer = await fixture().openPeer();
    const record = sampleTaskRecord();
    await fixture().store.create(record);
    const attempts = Array.from({ length: 12 }, (_, index) =>
      (index % 2 === 0 ? fixture().store : peer).update(record.id, 1, {
        ...record,
        result: `writer ${index}`,
      }),
    );
    const outcomes = await Promise.all(attempts);
    const winners = outcomes.filter((outcome) => outcome !== undefined);
    expect(winners).toHaveLength(1);
    expect(await peer.get(record.id)).toEqual(winners[0]);
  });

  it("no increment is lost when two handles retry their compare-and-swap at the same time", async () => {
    const peer = await fixture().openPeer();
    const record = sampleTaskRecord({ result: "0" });
    await fixture().store.create(record);
    const perHandle = 15;
    await Promise.all([
      (async () => {
        for (let i = 0; i < perHandle; i++) await increment(fixture().store, record.id);
      })(),
      (async () => {
        for (let i = 0; i < perHandle; i++) await increment(peer, record.id);
      })(),
    ]);
    const final = await fixture().store.get(record.id);
    expect(final?.result).toBe(String(2 * perHandle));
    expect(final?.version).toBe(2 * perHandle + 1);
  });

  it("list returns every task oldest first, as a peer sees them", async () => {
    const records = [
      sampleTaskRecord({ createdAt: 30 }),
      sampleTaskRecord({ createdAt: 10 }),
      sampleTaskRecord({ createdAt: 20 }),
    ];
    for (const record of records) await fixture().store.create(record);
    await fixture().store.update(records[0]!.id, 1, { ...records[0]!, status: "completed" });
    const peer = await fixture().openPeer();
    const listed = await peer.list();
    expect(listed.map((r) => r.createdAt)).toEqual([10, 20, 30]);
    expect(listed[2]).toMatchObject({ status: "completed", version: 2 });
  });
}

export function describeTaskStateStoreContract(options: TaskStateStoreContractOptions): void {
  describe(`task-state store contract: ${options.name}`, () => {
    const fixture = fixturePerTest(() => options.setup());

    describeOneHandle(fixture, options.propertyRuns ?? 25);
    describeTwoHandles(fixture);
  });
}
