import type { Attachment } from "@unforget/core";
import { describe, expectTypeOf, it } from "vitest";
import { getTaskHooks, type TaskSettledEvent } from "../__fixtures__/task-hooks.ts";
import type {
  PreCompactEvent,
  PreCompactResult,
  PreToolUseDecision,
  PreToolUseEvent,
  SessionEventBase,
} from "../hook-events.ts";
import { createGateHook, type GateDecision } from "../kinds/gate-hook.ts";
import type { PreToolUseHook } from "../kinds/pre-tool-use-hook.ts";
import { createTransformHook } from "../kinds/transform-hook.ts";
import { defineHookGroup } from "./hook-group.ts";
import type { HookPlugin, PluginHooks } from "./hook-plugin.ts";
import { createSessionHooks, type SessionHooks } from "./session-hooks.ts";

describe("plugin types", () => {
  it("a plugin sees only tap methods: it cannot fire, intercept or read taps", () => {
    const plugin: HookPlugin = {
      name: "sneaky",
      apply(hooks) {
        // @ts-expect-error plugins cannot fire a hook
        void hooks.preCompact.promise({ instructions: "" }, {} as PreCompactEvent);
        // @ts-expect-error plugins cannot fire a hook with a callback either
        hooks.postCompact.callAsync({} as never, () => {});
        // @ts-expect-error plugins cannot intercept
        hooks.sessionStart.intercept({});
        // @ts-expect-error plugins cannot see other plugins' taps
        void hooks.preToolUse.taps;
        // @ts-expect-error the bus is read-only
        hooks.preCompact = hooks.postCompact;
      },
    };
    expectTypeOf(plugin.apply).parameter(0).toEqualTypeOf<PluginHooks>();
    expectTypeOf<keyof PluginHooks["preCompact"]>().toEqualTypeOf<"tap" | "tapAsync" | "tapPromise">();
    expectTypeOf<keyof PluginHooks["preToolUse"]>().toEqualTypeOf<"tap" | "tapAsync" | "tapPromise">();
  });

  it("taps are typed with the event's argument tuple and result", () => {
    const plugin: HookPlugin = {
      name: "typed",
      apply(hooks) {
        hooks.preCompact.tapPromise("typed", async (result, event) => {
          expectTypeOf(result).toEqualTypeOf<PreCompactResult>();
          expectTypeOf(result.userInstructions).toEqualTypeOf<string | undefined>();
          expectTypeOf(event.trigger).toEqualTypeOf<"manual" | "auto" | "reactive">();
          return { ...result, instructions: `${result.instructions}\nmore` };
        });
        // @ts-expect-error a preCompact tap must return the waterfall value, not a bare string
        hooks.preCompact.tap("typed", () => "instructions");
        hooks.sessionStart.tap("typed", (attachments, event) => {
          expectTypeOf(attachments).toEqualTypeOf<Attachment[]>();
          expectTypeOf(event.source).toEqualTypeOf<"startup" | "resume" | "clear" | "compact">();
          return attachments;
        });
        hooks.preToolUse.tap("typed", (event) => {
          expectTypeOf(event.input).toEqualTypeOf<Record<string, unknown>>();
          return { behavior: "deny", reason: "no" };
        });
        // @ts-expect-error a deny decision needs a reason
        hooks.preToolUse.tap("typed", () => ({ behavior: "deny" }));
        hooks.preToolUse.tapAsync({ name: "typed", stage: 10 }, (event, callback) =>
          callback(null, { behavior: "rewrite", input: { ...event.input, sandbox: true } }),
        );
        hooks.preToolUse.tapPromise("typed", async () => ({ behavior: "allow" }));
        // @ts-expect-error a rewrite needs an input object
        hooks.preToolUse.tapPromise("typed", async () => ({ behavior: "rewrite" }));
      },
    };
    expectTypeOf(plugin.name).toBeString();
  });
});

describe("the app's side and declared groups", () => {
  it("the app fires hooks and gets typed results", () => {
    const hooks: SessionHooks = createSessionHooks();
    expectTypeOf(hooks.preCompact.promise).returns.resolves.toEqualTypeOf<PreCompactResult>();
    expectTypeOf(hooks.preToolUse.promise).returns.resolves.toEqualTypeOf<PreToolUseDecision | undefined>();
    expectTypeOf(hooks.postCompact.promise).returns.resolves.toBeVoid();
    expectTypeOf(hooks.preToolUse.promise).parameters.toEqualTypeOf<[PreToolUseEvent]>();
    expectTypeOf(hooks.preToolUse).toEqualTypeOf<PreToolUseHook>();
    // @ts-expect-error the gate runs every tap itself: there is no callback-style fire to bypass it
    hooks.preToolUse.callAsync({} as PreToolUseEvent, () => {});
  });

  it("a declared group: the bus fires it, a plugin only taps it, both typed from the declaration", () => {
    const getGateHooks = defineHookGroup("typed-gates", () => ({
      write: createGateHook<[SessionEventBase & { path: string }]>(["event"], "write", {
        matcherValue: (event) => event.path,
      }),
      recall: createTransformHook<[string[], SessionEventBase]>(["memories", "event"], "recall"),
    }));
    const hooks = createSessionHooks();
    expectTypeOf(getTaskHooks(hooks).taskSettled.promise).parameters.toEqualTypeOf<[TaskSettledEvent]>();
    expectTypeOf(getTaskHooks(hooks).taskSettled.promise).returns.resolves.toBeVoid();
    expectTypeOf(getGateHooks(hooks).write.promise).returns.resolves.toEqualTypeOf<
      GateDecision | undefined
    >();
    expectTypeOf(getGateHooks(hooks).recall.promise).returns.resolves.toEqualTypeOf<string[]>();
    const plugin: HookPlugin = {
      name: "typed-group",
      apply(bus) {
        const tasks = getTaskHooks(bus);
        expectTypeOf<keyof typeof tasks.taskSettled>().toEqualTypeOf<"tap" | "tapAsync" | "tapPromise">();
        tasks.taskSettled.tap("typed-group", (event) => {
          expectTypeOf(event.status).toEqualTypeOf<"completed" | "failed" | "killed">();
        });
        // @ts-expect-error a plugin cannot fire a declared hook either
        void tasks.taskSettled.promise({} as TaskSettledEvent);
        getGateHooks(bus).write.tap("typed-group", (event) =>
          event.path.endsWith(".md") ? undefined : { behavior: "deny", reason: "only markdown" },
        );
        // @ts-expect-error a gate tap answers allow / deny, nothing else
        getGateHooks(bus).write.tap("typed-group", () => ({ behavior: "rewrite" }));
        getGateHooks(bus).recall.tap("typed-group", (memories) => [...memories, "more"]);
      },
    };
    expectTypeOf(plugin.name).toBeString();
    // @ts-expect-error a group's create() must return an object of hooks
    defineHookGroup("broken", () => "not hooks");
  });
});
