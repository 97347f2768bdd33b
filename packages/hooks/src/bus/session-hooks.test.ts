import { describe, expect, it } from "vitest";
import { createRecordingBus } from "../__fixtures__/recording-bus.ts";
import { getTaskHooks } from "../__fixtures__/task-hooks.ts";
import type { HookError } from "../hook-error.ts";
import type { PreCompactEvent } from "../hook-events.ts";
import { applyPlugins, type HookPlugin } from "./hook-plugin.ts";
import { createSessionHooks } from "./session-hooks.ts";

const autoEvent: PreCompactEvent = {
  sessionId: "session-1",
  trigger: "auto",
  tokens: 170_000,
  threshold: 167_000,
};
const reactiveEvent: PreCompactEvent = { ...autoEvent, trigger: "reactive" };

function instructionsPlugin(name: string, text: string, stage?: number): HookPlugin {
  return {
    name,
    apply(hooks) {
      hooks.preCompact.tapPromise({ name, stage }, async (result) => ({
        ...result,
        instructions: `${result.instructions}\n${text}`,
      }));
    },
  };
}

function vetoPlugin(name: string): HookPlugin {
  return {
    name,
    apply(hooks) {
      hooks.preCompact.tap(name, (result) => ({ ...result, veto: { reason: "a release is being cut" } }));
    },
  };
}

describe("createSessionHooks", () => {
  it("returns a frozen bus, and a fresh one per call", () => {
    const first = createSessionHooks();
    const second = createSessionHooks();
    expect(Object.isFrozen(first)).toBe(true);
    expect(first.preCompact).not.toBe(second.preCompact);
  });

  it("fires an empty bus without changing the values", async () => {
    const { hooks } = createRecordingBus();
    await expect(hooks.preCompact.promise({ instructions: "user" }, autoEvent)).resolves.toEqual({
      instructions: "user",
    });
    await expect(hooks.sessionStart.promise([], { sessionId: "s", source: "startup" })).resolves.toEqual([]);
    await expect(
      hooks.preToolUse.promise({ sessionId: "s", toolName: "Bash", toolUseId: "t1", input: {} }),
    ).resolves.toBeUndefined();
  });
});

describe("preCompact", () => {
  it("keeps the user's instructions first and appends each plugin's in stage order", async () => {
    const { hooks, entries } = createRecordingBus();
    applyPlugins(hooks, [instructionsPlugin("late", "LATE", 10), instructionsPlugin("early", "EARLY", -10)]);
    const result = await hooks.preCompact.promise({ instructions: "USER" }, autoEvent);
    expect(result).toEqual({ instructions: "USER\nEARLY\nLATE" });
    expect(entries.map((entry) => [entry.handler, entry.outcome, entry.output])).toEqual([
      ["early", "success", "EARLY"],
      ["late", "success", "LATE"],
    ]);
    expect(entries[0]).toMatchObject({
      type: "hook_result",
      event: "PreCompact",
      sessionId: "session-1",
      v: 1,
    });
  });

  it("lets plugins pin messages: the pins accumulate over the taps, and a bad list is reported, not applied", async () => {
    const { hooks, errors } = createRecordingBus();
    const pinning = (name: string, pin: unknown) => ({
      name,
      apply(bus: typeof hooks) {
        bus.preCompact.tap(name, (result) => ({ ...result, pin: pin as string[] }));
      },
    });
    applyPlugins(hooks, [pinning("first", ["m1"]), pinning("second", ["toolu_2"]), pinning("forgetful", [])]);
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U",
      pin: ["m1", "toolu_2"],
    });
    const broken = createRecordingBus();
    applyPlugins(broken.hooks, [pinning("broken", "m1")]);
    await expect(broken.hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U",
    });
    expect(broken.errors[0]?.message).toMatch(/pin/);
    expect(errors).toEqual([]);
  });

  it("orders with `before` by plugin name", async () => {
    const { hooks } = createRecordingBus();
    applyPlugins(hooks, [
      instructionsPlugin("a", "A"),
      {
        name: "b",
        apply(bus) {
          bus.preCompact.tap({ name: "ignored", before: "a" }, (result) => ({
            instructions: `${result.instructions}\nB`,
          }));
        },
      },
    ]);
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U\nB\nA",
    });
  });

  it("lets a plugin veto an auto compaction, with its name and reason, and skips later taps", async () => {
    const { hooks, entries } = createRecordingBus();
    let laterCalled = false;
    applyPlugins(hooks, [
      vetoPlugin("release-guard"),
      {
        name: "later",
        apply(bus) {
          bus.preCompact.tap("later", (result) => {
            laterCalled = true;
            return result;
          });
        },
      },
    ]);
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result.veto).toEqual({ reason: "a release is being cut", by: "release-guard" });
    expect(laterCalled).toBe(false);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      handler: "release-guard",
      outcome: "blocked",
      reason: "a release is being cut",
    });
  });

  it("ignores a veto of a reactive compaction and reports it", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    applyPlugins(hooks, [vetoPlugin("release-guard"), instructionsPlugin("after", "AFTER")]);
    const result = await hooks.preCompact.promise({ instructions: "U" }, reactiveEvent);
    expect(result).toEqual({ instructions: "U\nAFTER" });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.handler).toBe("release-guard");
    expect(errors[0]?.message).toContain("cannot be vetoed");
    expect(entries[0]).toMatchObject({ handler: "release-guard", outcome: "error" });
  });

  it("a throwing tap is reported and does not veto: only an explicit veto stops a compaction", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "broken",
        apply(bus) {
          bus.preCompact.tapPromise("broken", async () => {
            throw new Error("disk full");
          });
        },
      },
      instructionsPlugin("after", "AFTER"),
    ]);
    for (const trigger of ["auto", "manual"] as const) {
      const result = await hooks.preCompact.promise({ instructions: "U" }, { ...autoEvent, trigger });
      expect(result).toEqual({ instructions: "U\nAFTER" });
      expect(result.veto).toBeUndefined();
    }
    expect(errors).toHaveLength(2);
    expect(errors[0]?.code).toBe("hook_failed");
    expect(errors[0]?.message).toBe(
      'Plugin "broken" threw in preCompact (disk full); its instructions were left out and the compaction goes on (only an explicit veto stops a compaction). Fix or remove the plugin.',
    );
    expect(entries[0]).toMatchObject({ handler: "broken", outcome: "error", reason: "disk full" });
  });

  it("never blocks a reactive compaction: a throwing tap is skipped and the others still contribute", async () => {
    const { hooks, errors } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "broken",
        apply(bus) {
          bus.preCompact.tapAsync("broken", (_result, _event, callback) => callback(new Error("nope")));
        },
      },
      instructionsPlugin("ok", "OK"),
    ]);
    const result = await hooks.preCompact.promise({ instructions: "U" }, reactiveEvent);
    expect(result).toEqual({ instructions: "U\nOK" });
    expect(errors.map((error) => error.handler)).toEqual(["broken"]);
  });

  it("treats a wrongly shaped result as a failure that is reported, not as a veto", async () => {
    const { hooks, errors } = createRecordingBus();
    const hooksAsUntyped = hooks.preCompact as unknown as { tap(name: string, fn: () => unknown): void };
    hooksAsUntyped.tap("sloppy", () => "just a string");
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result).toEqual({ instructions: "U" });
    expect(errors[0]?.message).toContain("returned an unusable result in preCompact");
    expect(errors[0]?.message).toContain("instructions");
    expect(errors[0]?.message).toContain("the compaction goes on");
  });
});

describe("observer hooks", () => {
  it("a throwing observer does not stop the others, and is reported and recorded", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    const seen: string[] = [];
    applyPlugins(hooks, [
      {
        name: "audit-a",
        apply(bus) {
          bus.postCompact.tapPromise("audit-a", async (event) => {
            seen.push(`a:${event.tokensAfter}`);
          });
        },
      },
      {
        name: "broken",
        apply(bus) {
          bus.postCompact.tap("broken", () => {
            throw new Error("observer exploded");
          });
        },
      },
      {
        name: "audit-b",
        apply(bus) {
          bus.postCompact.tapAsync("audit-b", (event, callback) => {
            seen.push(`b:${event.tokensBefore}`);
            callback();
          });
        },
      },
    ]);
    await hooks.postCompact.promise({
      sessionId: "session-1",
      trigger: "auto",
      layer: "full",
      summary: "S",
      tokensBefore: 100,
      tokensAfter: 10,
      messagesSummarized: 4,
    });
    expect(seen).toEqual(["a:10", "b:100"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe(
      'Plugin "broken" threw in postCompact (observer exploded); the other observers still ran and the session goes on. Fix or remove the plugin.',
    );
    expect(errors[0]?.hook).toBe("postCompact");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ event: "PostCompact", handler: "broken", outcome: "error" });
  });

  it("a rejected promise in postSampling, sessionEnd, postToolUse and a declared observer never rejects the fire", async () => {
    const { hooks, errors } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "broken",
        apply(bus) {
          bus.postSampling.tapPromise("broken", () => Promise.reject(new Error("x")));
          bus.sessionEnd.tapPromise("broken", () => Promise.reject(new Error("y")));
          getTaskHooks(bus).taskSettled.tapPromise("broken", () => Promise.reject(new Error("z")));
          bus.postToolUse.tapPromise("broken", () => Promise.reject(new Error("w")));
        },
      },
    ]);
    await hooks.postSampling.promise({ sessionId: "s", messageId: "m", contextTokens: 1, toolCalls: 0 });
    await hooks.sessionEnd.promise({ sessionId: "s", reason: "other" });
    await getTaskHooks(hooks).taskSettled.promise({ sessionId: "s", taskId: "t", status: "completed" });
    await hooks.postToolUse.promise({
      sessionId: "s",
      toolName: "Bash",
      toolUseId: "t",
      input: {},
      output: "",
      isError: false,
    });
    expect(errors.map((error) => error.hook)).toEqual([
      "postSampling",
      "sessionEnd",
      "taskSettled",
      "postToolUse",
    ]);
  });

  it("reports an onHookResult sink that throws, and still returns the value", async () => {
    const errors: HookError[] = [];
    const hooks = createSessionHooks({
      onHookError: (error) => errors.push(error),
      onHookResult: () => {
        throw new Error("transcript closed");
      },
    });
    hooks.sessionStart.tap("notes", (attachments) => [
      ...attachments,
      { kind: "hook-context", content: "n" },
    ]);
    await expect(hooks.sessionStart.promise([], { sessionId: "s", source: "resume" })).resolves.toHaveLength(
      1,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain("transcript closed");
  });

  it("survives an onHookError sink that throws", async () => {
    const hooks = createSessionHooks({
      onHookError: () => {
        throw new Error("sink broken");
      },
    });
    hooks.postCompact.tap("broken", () => {
      throw new Error("observer exploded");
    });
    await expect(
      hooks.postCompact.promise({
        sessionId: "s",
        trigger: "manual",
        layer: "full",
        summary: "",
        tokensBefore: 1,
        tokensAfter: 1,
        messagesSummarized: 0,
      }),
    ).resolves.toBeUndefined();
  });
});

describe("sessionStart and userPromptSubmit", () => {
  it("collects each plugin's attachments and records what they added", async () => {
    const { hooks, entries } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "project-notes",
        apply(bus) {
          bus.sessionStart.tapPromise("project-notes", async (attachments, event) => [
            ...attachments,
            { kind: "hook-context", content: `notes for ${event.source}`, source: "project-notes" },
          ]);
        },
      },
      {
        name: "broken",
        apply(bus) {
          bus.sessionStart.tap("broken", () => {
            throw new Error("no notes");
          });
        },
      },
    ]);
    const attachments = await hooks.sessionStart.promise([], { sessionId: "s", source: "compact" });
    expect(attachments).toEqual([
      { kind: "hook-context", content: "notes for compact", source: "project-notes" },
    ]);
    expect(entries.map((entry) => [entry.event, entry.handler, entry.outcome, entry.output])).toEqual([
      ["SessionStart", "project-notes", "success", "notes for compact"],
      ["SessionStart", "broken", "error", undefined],
    ]);
  });

  it("userPromptSubmit passes attachments through a failing tap", async () => {
    const { hooks } = createRecordingBus();
    hooks.userPromptSubmit.tap("one", (attachments) => [
      ...attachments,
      { kind: "hook-context", content: "1" },
    ]);
    hooks.userPromptSubmit.tap("two", () => {
      throw new Error("x");
    });
    const attachments = await hooks.userPromptSubmit.promise([], { sessionId: "s", prompt: "hi" });
    expect(attachments).toEqual([{ kind: "hook-context", content: "1" }]);
  });
});

describe("preToolUse", () => {
  const event = { sessionId: "s", toolName: "Bash", toolUseId: "t1", input: { command: "rm -rf /" } };

  it("deny is stamped with the plugin name and recorded; an allow with no deny allows", async () => {
    const { hooks, entries } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "guard",
        apply(bus) {
          bus.preToolUse.tap("guard", (toolEvent) =>
            String(toolEvent.input.command).includes("rm -rf")
              ? { behavior: "deny", reason: "destructive" }
              : undefined,
          );
        },
      },
      {
        name: "allow-all",
        apply(bus) {
          bus.preToolUse.tap("allow-all", () => ({ behavior: "allow" }));
        },
      },
    ]);
    await expect(hooks.preToolUse.promise(event)).resolves.toEqual({
      behavior: "deny",
      reason: "destructive",
      by: "guard",
    });
    await expect(hooks.preToolUse.promise({ ...event, input: { command: "ls" } })).resolves.toEqual({
      behavior: "allow",
    });
    expect(entries.map((entry) => entry.outcome)).toEqual(["blocked"]);
  });

  it("can rewrite the input", async () => {
    const { hooks } = createRecordingBus();
    hooks.preToolUse.tap("sandbox", (toolEvent) => ({
      behavior: "rewrite",
      input: { ...toolEvent.input, sandbox: true },
    }));
    await expect(hooks.preToolUse.promise(event)).resolves.toEqual({
      behavior: "rewrite",
      input: { command: "rm -rf /", sandbox: true },
    });
  });

  it("fails closed: a throwing gate denies the call", async () => {
    const { hooks, errors } = createRecordingBus();
    hooks.preToolUse.tapPromise("policy-server", async () => {
      throw new Error("ECONNREFUSED");
    });
    hooks.preToolUse.tap("allow-all", () => ({ behavior: "allow" }));
    const decision = await hooks.preToolUse.promise(event);
    expect(decision).toMatchObject({ behavior: "deny", by: "policy-server" });
    expect(decision?.behavior === "deny" && decision.reason).toContain("ECONNREFUSED");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe(
      'Plugin "policy-server" threw in preToolUse (ECONNREFUSED); the Bash call was denied (a tool gate that fails denies). Fix or remove the plugin.',
    );
  });
});

describe("preToolUse: deny wins", () => {
  const event = { sessionId: "s", toolName: "Bash", toolUseId: "t1", input: { command: "ls" } };

  function guardPlugin(name: string, seen?: unknown[]): HookPlugin {
    return {
      name,
      apply(bus) {
        bus.preToolUse.tap(name, (toolEvent) => {
          seen?.push(toolEvent.input);
          return String(toolEvent.input.command).includes("rm -rf")
            ? { behavior: "deny", reason: "destructive" }
            : undefined;
        });
      },
    };
  }

  it("an allow from an earlier tap does not skip a later guard", async () => {
    const { hooks } = createRecordingBus();
    applyPlugins(hooks, [
      {
        name: "allow-all",
        apply(bus) {
          bus.preToolUse.tap("allow-all", () => ({ behavior: "allow" }));
        },
      },
      guardPlugin("guard"),
    ]);
    await expect(hooks.preToolUse.promise({ ...event, input: { command: "rm -rf /" } })).resolves.toEqual({
      behavior: "deny",
      reason: "destructive",
      by: "guard",
    });
    await expect(hooks.preToolUse.promise(event)).resolves.toEqual({ behavior: "allow" });
  });

  it("a later guard checks the rewritten input, and its deny wins over the rewrite", async () => {
    const { hooks } = createRecordingBus();
    const seen: unknown[] = [];
    applyPlugins(hooks, [
      {
        name: "rewriter",
        apply(bus) {
          bus.preToolUse.tap("rewriter", () => ({ behavior: "rewrite", input: { command: "rm -rf /" } }));
        },
      },
      guardPlugin("guard", seen),
    ]);
    await expect(hooks.preToolUse.promise(event)).resolves.toEqual({
      behavior: "deny",
      reason: "destructive",
      by: "guard",
    });
    expect(seen).toEqual([{ command: "rm -rf /" }]);
    expect(event.input).toEqual({ command: "ls" });
  });

  it("rewrites chain: each tap sees the last input, the final decision carries it", async () => {
    const { hooks, entries } = createRecordingBus();
    const seen: unknown[] = [];
    applyPlugins(hooks, [
      {
        name: "sandbox",
        apply(bus) {
          bus.preToolUse.tap("sandbox", (toolEvent) => ({
            behavior: "rewrite",
            input: { ...toolEvent.input, sandbox: true },
          }));
        },
      },
      {
        name: "allow-all",
        apply(bus) {
          bus.preToolUse.tap("allow-all", () => ({ behavior: "allow" }));
        },
      },
      {
        name: "timeout",
        apply(bus) {
          bus.preToolUse.tapPromise("timeout", async (toolEvent) => ({
            behavior: "rewrite",
            input: { ...toolEvent.input, timeout: 10 },
          }));
        },
      },
      guardPlugin("guard", seen),
    ]);
    await expect(hooks.preToolUse.promise(event)).resolves.toEqual({
      behavior: "rewrite",
      input: { command: "ls", sandbox: true, timeout: 10 },
    });
    expect(seen).toEqual([{ command: "ls", sandbox: true, timeout: 10 }]);
    expect(entries.map((entry) => [entry.handler, entry.outcome])).toEqual([
      ["sandbox", "success"],
      ["timeout", "success"],
    ]);
  });

  it("a deny stops the taps after it, and a later failing tap cannot turn it into anything else", async () => {
    const { hooks } = createRecordingBus();
    let laterCalled = false;
    applyPlugins(hooks, [
      guardPlugin("guard"),
      {
        name: "later",
        apply(bus) {
          bus.preToolUse.tap("later", () => {
            laterCalled = true;
            return { behavior: "allow" };
          });
        },
      },
    ]);
    await expect(
      hooks.preToolUse.promise({ ...event, input: { command: "rm -rf /" } }),
    ).resolves.toMatchObject({ behavior: "deny", by: "guard" });
    expect(laterCalled).toBe(false);
  });

  it("a throwing tap after an allow and a rewrite still denies (fail closed)", async () => {
    const { hooks, errors } = createRecordingBus();
    hooks.preToolUse.tap("allow-all", () => ({ behavior: "allow" }));
    hooks.preToolUse.tap("rewriter", () => ({ behavior: "rewrite", input: { command: "true" } }));
    hooks.preToolUse.tapAsync("policy-server", (_toolEvent, callback) => callback(new Error("ECONNREFUSED")));
    await expect(hooks.preToolUse.promise(event)).resolves.toMatchObject({
      behavior: "deny",
      by: "policy-server",
    });
    expect(errors.map((error) => error.handler)).toEqual(["policy-server"]);
  });
});

describe("waterfalls keep what earlier taps contributed", () => {
  it("a preCompact tap that replaces the instructions keeps the user's first, appends its text, and is reported", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    applyPlugins(hooks, [
      instructionsPlugin("early", "EARLY"),
      {
        name: "replacer",
        apply(bus) {
          bus.preCompact.tap("replacer", (result) => ({
            ...result,
            instructions: "Only summarize the code.",
          }));
        },
      },
      instructionsPlugin("late", "LATE"),
    ]);
    const result = await hooks.preCompact.promise({ instructions: "USER" }, autoEvent);
    expect(result.instructions).toBe("USER\nEARLY\n\nOnly summarize the code.\nLATE");
    expect(result.veto).toBeUndefined();
    expect(errors.map((error) => error.handler)).toEqual(["replacer"]);
    expect(errors[0]?.message).toContain("do not start with the instructions it received");
    expect(entries.find((entry) => entry.handler === "replacer")).toMatchObject({
      outcome: "error",
      output: "Only summarize the code.",
    });
  });

  it("every preCompact tap sees the user's own instructions, which a tap cannot forge; the result stays clean", async () => {
    const { hooks } = createRecordingBus();
    const seen: (string | undefined)[] = [];
    applyPlugins(hooks, [
      {
        name: "forger",
        apply(bus) {
          bus.preCompact.tap("forger", (result) => {
            seen.push(result.userInstructions);
            return { instructions: `${result.instructions}\nA`, userInstructions: "forged" };
          });
        },
      },
      {
        name: "reader",
        apply(bus) {
          bus.preCompact.tapPromise("reader", async (result) => {
            seen.push(result.userInstructions);
            return undefined as unknown as typeof result;
          });
        },
      },
      {
        name: "last",
        apply(bus) {
          bus.preCompact.tap("last", (result) => {
            seen.push(result.userInstructions);
            return result;
          });
        },
      },
    ]);
    const result = await hooks.preCompact.promise({ instructions: "USER" }, autoEvent);
    expect(seen).toEqual(["USER", "USER", "USER"]);
    expect(result).toEqual({ instructions: "USER\nA" });
  });

  it("a preCompact tap that drops text it received adds nothing already there", async () => {
    const { hooks, errors } = createRecordingBus();
    applyPlugins(hooks, [
      instructionsPlugin("early", "EARLY"),
      {
        name: "dropper",
        apply(bus) {
          bus.preCompact.tap("dropper", () => ({ instructions: "EARLY" }));
        },
      },
    ]);
    await expect(hooks.preCompact.promise({ instructions: "USER" }, autoEvent)).resolves.toMatchObject({
      instructions: "USER\nEARLY",
    });
    expect(errors).toHaveLength(1);
  });

  it("a veto that also replaced the instructions still vetoes, with the instructions restored", async () => {
    const { hooks, errors } = createRecordingBus();
    hooks.preCompact.tap("guard", () => ({ instructions: "", veto: { reason: "release" } }));
    const result = await hooks.preCompact.promise({ instructions: "USER" }, autoEvent);
    expect(result).toMatchObject({ instructions: "USER", veto: { reason: "release", by: "guard" } });
    expect(errors).toHaveLength(1);
  });

  it("sessionStart: a tap that removes earlier attachments has them restored, its own kept, and is reported", async () => {
    const { hooks, errors, entries } = createRecordingBus();
    const notes = { kind: "hook-context", content: "notes", source: "notes" } as const;
    const rules = { kind: "hook-context", content: "rules", source: "rules" } as const;
    applyPlugins(hooks, [
      {
        name: "notes",
        apply(bus) {
          bus.sessionStart.tap("notes", (attachments) => [...attachments, notes]);
        },
      },
      {
        name: "greedy",
        apply(bus) {
          bus.sessionStart.tap("greedy", () => [rules]);
        },
      },
    ]);
    const attachments = await hooks.sessionStart.promise([], { sessionId: "s", source: "startup" });
    expect(attachments).toEqual([notes, rules]);
    expect(errors.map((error) => error.handler)).toEqual(["greedy"]);
    expect(errors[0]?.message).toContain("removed");
    expect(entries.find((entry) => entry.handler === "greedy")).toMatchObject({
      outcome: "error",
      output: "rules",
    });
  });

  it("userPromptSubmit: a tap that returns an empty list keeps the app's and earlier taps' attachments", async () => {
    const { hooks, errors } = createRecordingBus();
    const fromApp = { kind: "hook-context", content: "app" } as const;
    hooks.userPromptSubmit.tap("wipe", () => []);
    await expect(
      hooks.userPromptSubmit.promise([fromApp], { sessionId: "s", prompt: "hi" }),
    ).resolves.toEqual([fromApp]);
    expect(errors).toHaveLength(1);
  });

  it("copies of the earlier attachments count as kept", async () => {
    const { hooks, errors } = createRecordingBus();
    hooks.sessionStart.tap("copier", (attachments) => [
      ...attachments.map((attachment) => ({ ...attachment })),
      { kind: "hook-context", content: "mine" },
    ]);
    const fromApp = { kind: "hook-context", content: "app" } as const;
    await expect(
      hooks.sessionStart.promise([fromApp], { sessionId: "s", source: "resume" }),
    ).resolves.toEqual([fromApp, { kind: "hook-context", content: "mine" }]);
    expect(errors).toHaveLength(0);
  });
});

describe("applyPlugins", () => {
  it("names every tap after its plugin", () => {
    const hooks = createSessionHooks();
    applyPlugins(hooks, [
      {
        name: "audit",
        apply(bus) {
          bus.postCompact.tap("something-else", () => {});
          bus.preCompact.tapPromise({ name: "x", stage: 5 }, async (result) => result);
        },
      },
    ]);
    expect(hooks.postCompact.taps.map((tap) => tap.name)).toEqual(["audit"]);
    expect(hooks.preCompact.taps.map((tap) => [tap.name, tap.stage])).toEqual([["audit", 5]]);
  });

  it("gives plugins only tap methods at run time too", () => {
    const hooks = createSessionHooks();
    let keys: string[] = [];
    applyPlugins(hooks, [
      {
        name: "peek",
        apply(bus) {
          keys = Object.keys(bus.preCompact);
        },
      },
    ]);
    expect(keys.sort()).toEqual(["tap", "tapAsync", "tapPromise"]);
  });

  it("rejects duplicate names and reports a throwing apply", () => {
    const hooks = createSessionHooks();
    const plugin: HookPlugin = { name: "same", apply() {} };
    expect(() => applyPlugins(hooks, [plugin, plugin])).toThrow(/named "same"/);
    expect(() =>
      applyPlugins(createSessionHooks(), [
        {
          name: "bad",
          apply() {
            throw new Error("boom");
          },
        },
      ]),
    ).toThrow(/"bad" threw from apply\(\) \(boom\)/);
  });
});
