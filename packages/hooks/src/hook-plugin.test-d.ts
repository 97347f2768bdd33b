import type { Attachment } from "@unforget/core";
import { describe, expectTypeOf, it } from "vitest";
import type {
  PreCompactEvent,
  PreCompactResult,
  PreToolUseDecision,
  PreToolUseEvent,
} from "./hook-events.ts";
import type { HookPlugin, PluginHooks } from "./hook-plugin.ts";
import type { PreToolUseHook } from "./pre-tool-use-hook.ts";
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
});
