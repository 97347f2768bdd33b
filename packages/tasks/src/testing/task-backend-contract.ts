import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { TaskBackend } from "../backend/task-backend.ts";
import type { TaskOwner } from "../task/task-record.ts";
import { fixturePerTest } from "./fixture-per-test.ts";
import { describeTaskStateStoreContract, sampleTaskRecord } from "./task-state-store-contract.ts";

/** One scenario's backend: empty, with a second handle on the same storage. */
export interface TaskBackendFixture {
  /** The backend under test, empty. */
  backend: TaskBackend;
  /** Another independent handle on the same storage, as a second process or connection would open it. */
  openPeer(): Promise<TaskBackend>;
  /**
   * Makes `text` committed output of task `id` (which exists in the store), as the task's runner and the
   * backend's shipping would: the file backend appends to the output file, a server backend commits a chunk.
   */
  appendOutput(id: string, text: string): Promise<void>;
  /** Called after the scenario: release the storage and close the handles. */
  teardown(): Promise<void>;
}

export interface TaskBackendContractOptions {
  /** Used in the describe titles. */
  name: string;
  /** Called before every scenario; `leaseMs` is the lease the backend's `leases` must use. */
  setup(options: { leaseMs: number }): Promise<TaskBackendFixture>;
  /** Runs of the store's round-trip property (default 25; a networked store may want fewer). */
  propertyRuns?: number;
}

let owners = 0;

/** An owner on another host, so that only its lease (not a process check) decides whether it holds. */
function remoteOwner(): TaskOwner {
  owners += 1;
  return {
    managerId: `owner-${process.pid}-${owners}`,
    pid: 1,
    startTime: "1",
    hostname: `elsewhere-${hostname()}`,
  };
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await sleep(25);
  }
}

/** Output read from any offset through any handle, and commands answered once. */
function describeOutputAndCommands(fixture: () => TaskBackendFixture): void {
  it("output: readers see committed bytes only, from any offset, through any handle", async () => {
    const record = sampleTaskRecord();
    await fixture().backend.store.create(record);
    const peer = await fixture().openPeer();
    expect(await peer.output.stat(record.id)).toEqual({ size: 0 });
    expect((await peer.output.read(record.id, 0, 64)).length).toBe(0);
    await fixture().appendOutput(record.id, "héllo ");
    await fixture().appendOutput(record.id, "wörld\n");
    const stat = await peer.output.stat(record.id);
    expect(stat.size).toBe(Buffer.byteLength("héllo wörld\n"));
    expect(stat.lastWriteAt).toBeGreaterThan(0);
    expect(Buffer.from(await peer.output.read(record.id, 0, 1024)).toString()).toBe("héllo wörld\n");
    expect(Buffer.from(await peer.output.read(record.id, 3, 5)).toString()).toBe("llo w");
    expect((await peer.output.read(record.id, stat.size, 64)).length).toBe(0);
    expect((await peer.output.read(record.id, stat.size + 10, 64)).length).toBe(0);
  });

  it("commands: sent through one handle, pending for the owner until answered, answered once", async () => {
    const record = sampleTaskRecord();
    await fixture().backend.store.create(record);
    const sender = await fixture().openPeer();
    const owner = fixture().backend.commands;
    const stdin = await sender.commands.send({ taskId: record.id, kind: "stdin", input: "y\n", end: true });
    const stop = await sender.commands.send({ taskId: record.id, kind: "stop" });
    expect(stdin.id).not.toBe(stop.id);
    const pending = await owner.pending(record.id);
    expect(pending.map((command) => command.id)).toEqual([stdin.id, stop.id]);
    expect(pending[0]).toMatchObject({ taskId: record.id, kind: "stdin", input: "y\n", end: true });
    expect(await sender.commands.result(stdin)).toBeUndefined();

    await owner.acknowledge(pending[0]!, { ok: true, at: 1 });
    // A second answer (a retry, another owner) does not replace the first.
    await owner.acknowledge(pending[0]!, { ok: false, error: "late", at: 2 });
    expect(await sender.commands.result(stdin)).toMatchObject({ ok: true, at: 1 });
    expect((await owner.pending(record.id)).map((command) => command.id)).toEqual([stop.id]);
    await owner.acknowledge(pending[1]!, { ok: false, error: "it had ended", at: 3 });
    expect(await sender.commands.result(stop)).toMatchObject({ ok: false, error: "it had ended" });
    expect(await owner.pending(record.id)).toEqual([]);
  });
}

/** Leases: renewed, seen by every handle, released, lapsed, and none for a dead local process. */
function describeLeases(fixture: () => TaskBackendFixture, options: TaskBackendContractOptions): void {
  it("leases: renewed by heartbeat, seen by every handle, ended by release", async () => {
    const owner = remoteOwner();
    const peer = await fixture().openPeer();
    expect(await peer.leases.holds(owner)).toBe(false);
    await fixture().backend.leases.renew(owner, []);
    expect(await peer.leases.holds(owner)).toBe(true);
    expect(await peer.leases.holds(remoteOwner())).toBe(false);
    await fixture().backend.leases.release(owner);
    expect(await peer.leases.holds(owner)).toBe(false);
  });

  it("leases: an owner on this host whose process is gone holds none, whatever its last renewal", async () => {
    const gone: TaskOwner = { ...remoteOwner(), hostname: hostname(), pid: 2 ** 22 + 7, startTime: "1" };
    await fixture().backend.leases.renew(gone, []);
    expect(await fixture().backend.leases.holds(gone)).toBe(false);
  });

  it("leases: a lease that is not renewed lapses", async () => {
    const short = await options.setup({ leaseMs: 300 });
    try {
      expect(short.backend.leases.leaseMs).toBe(300);
      const owner = remoteOwner();
      await short.backend.leases.renew(owner, []);
      const peer = await short.openPeer();
      await eventually(async () => !(await peer.leases.holds(owner)));
    } finally {
      await short.teardown();
    }
  });
}

/** The mailbox: each message received once and in order, waiting receives, messages outlive a handle. */
function describeMailbox(fixture: () => TaskBackendFixture): void {
  it("mailbox: every message is received once, oldest first, whichever handle asks", async () => {
    const peer = await fixture().openPeer();
    const texts = Array.from({ length: 20 }, (_, index) => `message ${index}`);
    for (const text of texts) await fixture().backend.mailbox.send({ from: "a", to: "task-1", text });
    const received = await Promise.all([
      fixture().backend.mailbox.receive("task-1"),
      peer.mailbox.receive("task-1"),
      peer.mailbox.receive("task-1"),
    ]);
    const all = received.flat();
    expect(all.map((message) => message.text).sort()).toEqual([...texts].sort());
    for (const batch of received) {
      const order = batch.map((message) => texts.indexOf(message.text));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    expect(new Set(all.map((message) => message.id)).size).toBe(texts.length);
    expect(await peer.mailbox.receive("task-1")).toEqual([]);
    expect(all[0]).toMatchObject({ from: "a", to: "task-1", kind: "message" });
  });

  it("mailbox: a waiting receive returns what another handle sends, and messages outlive the handle", async () => {
    const peer = await fixture().openPeer();
    const waiting = peer.mailbox.receive("coordinator", { waitMs: 30_000 });
    await fixture().backend.mailbox.send({
      from: "task-2",
      to: "coordinator",
      kind: "progress",
      text: "half way",
    });
    expect((await waiting).map((message) => message.text)).toEqual(["half way"]);
    await fixture().backend.mailbox.send({ from: "task-2", to: "coordinator", kind: "result", text: "done" });
    const later = await fixture().openPeer();
    expect(await later.mailbox.receive("coordinator")).toMatchObject([{ kind: "result", text: "done" }]);
  });
}

/**
 * The conformance suite of a whole task backend: its store (`describeTaskStateStoreContract`), and output,
 * leases, commands and mailbox as two handles on the same storage see them. A backend is done when it passes.
 */
export function describeTaskBackendContract(options: TaskBackendContractOptions): void {
  describeTaskStateStoreContract({
    name: options.name,
    propertyRuns: options.propertyRuns,
    async setup() {
      const fixture = await options.setup({ leaseMs: 30_000 });
      return {
        store: fixture.backend.store,
        openPeer: async () => (await fixture.openPeer()).store,
        teardown: () => fixture.teardown(),
      };
    },
  });

  describe(`task backend contract: ${options.name}`, () => {
    const fixture = fixturePerTest(() => options.setup({ leaseMs: 30_000 }));

    describeOutputAndCommands(fixture);
    describeLeases(fixture, options);
    describeMailbox(fixture);
  });
}
