import { AsyncParallelHook } from "tapable";
import { describe, expect, it } from "vitest";
import { createRecordingBus } from "../__fixtures__/recording-bus.ts";
import { getTaskHooks, type TaskSettledEvent } from "../__fixtures__/task-hooks.ts";
import { HookError } from "../hook-error.ts";
import type { SessionEventBase } from "../hook-events.ts";
import { createGateHook } from "../kinds/gate-hook.ts";
import { createObserverHook } from "../kinds/observer-hook.ts";
import { createTransformHook } from "../kinds/transform-hook.ts";
import { defineHookGroup } from "./hook-group.ts";
import { applyPlugins, type HookPlugin } from "./hook-plugin.ts";
import { createSessionHooks } from "./session-hooks.ts";

const settled: TaskSettledEvent = { sessionId: "session-1", taskId: "task-1", status: "completed" };

interface RecallEvent extends SessionEventBase {
  query: string;
}

interface WriteEvent extends SessionEventBase {
  path: string;
}

/** A group with one hook of each kind, as a memory package might declare it. */
const getMemoryHooks = defineHookGroup("memory-test", () => ({
  recall: createTransformHook<[string[], RecallEvent]>(["memories", "event"], "recall", {
    eventName: "MemoryRecall",
    addCommandContext: (memories, contexts) => [...memories, ...contexts.map((context) => context.text)],
  }),
  beforeWrite: createGateHook<[WriteEvent]>(["event"], "beforeWrite", {
    eventName: "MemoryWrite",
    matcherValue: (event) => event.path,
  }),
  summary: createTransformHook<[{ text: string }, RecallEvent]>(["summary", "event"], "summary", {
    // "Append-only" for an object: the text may only grow.
    merge: (received, returned) =>
      returned.text.startsWith(received.text)
        ? returned
        : { text: `${received.text}\n${returned.text.replace(received.text, "").trim()}` },
  }),
}));

const recallEvent: RecallEvent = { sessionId: "session-1", query: "parser" };
const writeEvent: WriteEvent = { sessionId: "session-1", path: "MEMORY.md" };

describe("defineHookGroup", () => {
  it("creates the group once per bus, frozen, and a separate one for another bus", () => {
    const first = createSessionHooks();
    const second = createSessionHooks();
    const group = getTaskHooks(first);
    expect(getTaskHooks(first)).toBe(group);
    expect(Object.isFrozen(group)).toBe(true);
    expect(getTaskHooks(second)).not.toBe(group);
    expect(getTaskHooks(second).taskSettled).not.toBe(group.taskSettled);
    expect(getTaskHooks.namespace).toBe("tasks");
  });

  it("gives a plugin a tap-only view of the same group, taps named after the plugin", async () => {
    const { hooks } = createRecordingBus();
    const seen: string[] = [];
    let keys: string[] = [];
    let sameView = false;
    applyPlugins(hooks, [
      {
        name: "audit",
        apply(bus) {
          const view = getTaskHooks(bus);
          sameView = getTaskHooks(bus) === view;
          keys = Object.keys(view.taskSettled).sort();
          view.taskSettled.tapPromise("not-my-name", async (event) => {
            seen.push(event.taskId);
          });
        },
      },
    ]);
    expect(sameView).toBe(true);
    expect(keys).toEqual(["tap", "tapAsync", "tapPromise"]);
    expect(getTaskHooks(hooks).taskSettled.taps.map((tap) => tap.name)).toEqual(["audit"]);
    await getTaskHooks(hooks).taskSettled.promise(settled);
    expect(seen).toEqual(["task-1"]);
  });

  it("isolates a failing observer like the bus's own: reported, recorded through the bus's sinks, others run", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    const seen: string[] = [];
    applyPlugins(hooks, [
      {
        name: "broken",
        apply(bus) {
          getTaskHooks(bus).taskSettled.tap("broken", () => {
            throw new Error("audit log full");
          });
        },
      },
      {
        name: "notifier",
        apply(bus) {
          getTaskHooks(bus).taskSettled.tapAsync("notifier", (event, callback) => {
            seen.push(event.status);
            callback();
          });
        },
      },
    ]);
    await expect(getTaskHooks(hooks).taskSettled.promise(settled)).resolves.toBeUndefined();
    expect(seen).toEqual(["completed"]);
    expect(errors.map((error) => [error.hook, error.handler])).toEqual([["taskSettled", "broken"]]);
    expect(errors[0]?.message).toContain("audit log full");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      type: "hook_result",
      event: "TaskSettled",
      handler: "broken",
      outcome: "error",
      reason: "audit log full",
      sessionId: "session-1",
    });
  });

  it("a group first created through a plugin's view is the one the emitter fires later", async () => {
    const { hooks } = createRecordingBus();
    const seen: string[] = [];
    applyPlugins(hooks, [
      {
        name: "late-reader",
        apply(bus) {
          getMemoryHooks(bus).recall.tap("late-reader", (memories) => {
            seen.push("tapped");
            return memories;
          });
        },
      },
    ]);
    await getMemoryHooks(hooks).recall.promise([], recallEvent);
    expect(seen).toEqual(["tapped"]);
  });

  it("a second definition with the same namespace on one bus is an error; the same definition is not", () => {
    const hooks = createSessionHooks();
    const impostor = defineHookGroup("tasks", () => ({
      taskSettled: createObserverHook<[TaskSettledEvent]>(["event"], "taskSettled"),
    }));
    getTaskHooks(hooks);
    expect(() => getTaskHooks(hooks)).not.toThrow();
    expect(() => impostor(hooks)).toThrow(HookError);
    expect(() => impostor(hooks)).toThrow(/Two different hook groups use the namespace "tasks"/);
    // On another bus the first one to come wins, and the other is refused there instead.
    const other = createSessionHooks();
    expect(() => impostor(other)).not.toThrow();
    expect(() => getTaskHooks(other)).toThrow(/namespace "tasks"/);
  });

  it("refuses members that are not declared hooks, shared hooks, a throwing create and a taken event name", () => {
    const hooks = createSessionHooks();
    const plain = defineHookGroup("plain", () => ({ raw: new AsyncParallelHook<[string]>(["event"]) }));
    expect(() => plain(hooks)).toThrow(/Member "raw" of the "plain" hook group is not a hook made by/);

    const shared = createObserverHook<[SessionEventBase]>(["event"], "shared");
    const sharing = defineHookGroup("sharing", () => ({ shared }));
    expect(() => sharing(createSessionHooks())).not.toThrow();
    expect(() => sharing(createSessionHooks())).toThrow(/already belongs to a bus/);

    const throwing = defineHookGroup("throwing", () => {
      throw new Error("boom");
    });
    expect(() => throwing(hooks)).toThrow(/Creating the "throwing" hook group threw \(boom\)/);

    const clash = defineHookGroup("clash", () => ({
      preCompactCopy: createObserverHook<[SessionEventBase]>(["event"], "preCompactCopy", {
        eventName: "PreCompact",
      }),
    }));
    expect(() => clash(hooks)).toThrow(/declares the event "PreCompact", which another hook on this bus/);

    const taskClash = defineHookGroup("task-clash", () => ({
      settled: createObserverHook<[SessionEventBase]>(["event"], "settled", { eventName: "TaskSettled" }),
    }));
    getTaskHooks(hooks);
    expect(() => taskClash(hooks)).toThrow(/"TaskSettled"/);
  });

  it("refuses anything that is neither a bus nor a plugin view", () => {
    expect(() => getTaskHooks({} as never)).toThrow(/not a session bus/);
  });

  it("lists its event names without touching any bus", () => {
    expect(getTaskHooks.eventNames).toEqual(["TaskSettled"]);
    expect(getMemoryHooks.eventNames).toEqual(["MemoryRecall", "MemoryWrite"]);
  });
});

describe("declared transform hooks", () => {
  it("array values only grow: a tap that drops items has them restored, its own appended, and is reported", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    const recall = getMemoryHooks(hooks).recall;
    recall.tap("adds", (memories) => [...memories, "parser notes"]);
    recall.tap("greedy", () => ["only mine"]);
    recall.tapPromise("broken", async () => {
      throw new Error("index missing");
    });
    await expect(recall.promise(["from the app"], recallEvent)).resolves.toEqual([
      "from the app",
      "parser notes",
      "only mine",
    ]);
    expect(errors.map((error) => error.handler)).toEqual(["greedy", "broken"]);
    expect(errors[0]?.message).toContain("removed or replaced items it received");
    expect(errors[1]?.message).toContain("what it received was passed on unchanged");
    expect(entries.map((entry) => [entry.event, entry.handler, entry.outcome])).toEqual([
      ["MemoryRecall", "adds", "success"],
      ["MemoryRecall", "greedy", "error"],
      ["MemoryRecall", "broken", "error"],
    ]);
  });

  it("merge defines append-only for other values: a tap that replaced is repaired and reported", async () => {
    const { hooks, errors } = createRecordingBus();
    const summary = getMemoryHooks(hooks).summary;
    summary.tap("appends", (value) => ({ text: `${value.text}\nkeep TODOs` }));
    summary.tap("replaces", () => ({ text: "only this" }));
    await expect(summary.promise({ text: "user" }, recallEvent)).resolves.toEqual({
      text: "user\nkeep TODOs\nonly this",
    });
    expect(errors.map((error) => error.handler)).toEqual(["replaces"]);
    expect(errors[0]?.message).toContain("the hook's merge restored it");
  });
});

describe("declared gates", () => {
  it("deny wins over an earlier allow, stops the later taps and carries the plugin name", async () => {
    const { hooks, entries } = createRecordingBus();
    let laterCalled = false;
    applyPlugins(hooks, [
      {
        name: "allow-all",
        apply: (bus) => getMemoryHooks(bus).beforeWrite.tap("x", () => ({ behavior: "allow" })),
      },
      {
        name: "read-only",
        apply: (bus) =>
          getMemoryHooks(bus).beforeWrite.tap("x", (event) =>
            event.path === "MEMORY.md" ? { behavior: "deny", reason: "the index is read-only" } : undefined,
          ),
      },
      {
        name: "later",
        apply: (bus) =>
          getMemoryHooks(bus).beforeWrite.tap("x", () => {
            laterCalled = true;
            return undefined;
          }),
      },
    ]);
    const gate = getMemoryHooks(hooks).beforeWrite;
    await expect(gate.promise(writeEvent)).resolves.toEqual({
      behavior: "deny",
      reason: "the index is read-only",
      by: "read-only",
    });
    expect(laterCalled).toBe(false);
    expect(entries[0]).toMatchObject({ event: "MemoryWrite", handler: "read-only", outcome: "blocked" });
    await expect(gate.promise({ ...writeEvent, path: "topics/parser.md" })).resolves.toEqual({
      behavior: "allow",
    });
    expect(laterCalled).toBe(true);
  });

  it("fails closed: a throwing tap or a malformed decision denies, and says so", async () => {
    const { hooks, errors } = createRecordingBus();
    const gate = getMemoryHooks(hooks).beforeWrite;
    gate.tapPromise("policy-server", async () => {
      throw new Error("ECONNREFUSED");
    });
    const decision = await gate.promise(writeEvent);
    expect(decision).toMatchObject({ behavior: "deny", by: "policy-server" });
    expect(decision?.behavior === "deny" && decision.reason).toContain("ECONNREFUSED");
    expect(errors[0]?.message).toContain("the beforeWrite gate denied");

    const other = createRecordingBus();
    const sloppy = getMemoryHooks(other.hooks).beforeWrite as unknown as {
      tap(name: string, fn: () => unknown): void;
    };
    sloppy.tap("sloppy", () => ({ behavior: "maybe" }));
    await expect(getMemoryHooks(other.hooks).beforeWrite.promise(writeEvent)).resolves.toMatchObject({
      behavior: "deny",
      by: "sloppy",
    });
    expect(other.errors[0]?.message).toContain("returned an unusable result");
  });

  it("no taps, or only taps without an opinion, give no opinion", async () => {
    const { hooks } = createRecordingBus();
    const gate = getMemoryHooks(hooks).beforeWrite;
    await expect(gate.promise(writeEvent)).resolves.toBeUndefined();
    gate.tap("silent", () => undefined);
    await expect(gate.promise(writeEvent)).resolves.toBeUndefined();
  });
});

describe("hooks outside a group", () => {
  it("a declared hook never bound to a bus still isolates failures, as process warnings", async () => {
    const hook = createObserverHook<[SessionEventBase]>(["event"], "standalone");
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      hook.tap("broken", () => {
        throw new Error("lonely");
      });
      await expect(hook.promise({ sessionId: "s" })).resolves.toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.some((message) => message.includes("lonely"))).toBe(true);
  });
});

describe("a plugin that uses a declared group", () => {
  it("is written once and works on every bus", async () => {
    const log: string[] = [];
    const plugin: HookPlugin = {
      name: "task-log",
      apply(bus) {
        getTaskHooks(bus).taskSettled.tapPromise("task-log", async (event) => {
          log.push(`${event.sessionId}:${event.taskId}`);
        });
      },
    };
    for (const sessionId of ["a", "b"]) {
      const hooks = createSessionHooks({ sessionId });
      applyPlugins(hooks, [plugin]);
      await getTaskHooks(hooks).taskSettled.promise({ sessionId, taskId: "t", status: "killed" });
    }
    expect(log).toEqual(["a:t", "b:t"]);
  });
});
