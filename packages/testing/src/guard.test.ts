import { ConfigurationError, isUnforgetError } from "@unforget/core";
import { afterAll, describe, expect, it } from "vitest";
import type * as Typed from "./__fixtures__/typed-case.ts";
import { createHangGuard, DEFAULT_HANG_DEADLINE_MS, GuardedCallError, HangError } from "./guard.ts";

const CASES = new URL("./__fixtures__/guard-cases.mjs", import.meta.url);
type Call = (name: string, ...args: unknown[]) => Promise<unknown>;

describe("createHangGuard", () => {
  // Calls that settle get the default deadline, far above what they need on any machine.
  const guard = createHangGuard(CASES);
  // Calls that never settle get a short one: whatever the machine's speed, they cannot finish.
  const strict = createHangGuard(CASES, { deadlineMs: 1_000 });
  afterAll(async () => {
    await guard.close();
    await strict.close();
  });

  it("runs an export in a worker and resolves with its result, awaited", async () => {
    const call = guard.call as Call;
    expect(await call("add", 2, 3)).toBe(5);
    expect(await call("later", "héllo")).toEqual({ text: "héllo", length: 5 });
    expect(DEFAULT_HANG_DEADLINE_MS).toBe(20_000);
  });

  it("loads a TypeScript module with tsx, and types the calls from the module", async () => {
    const typed = createHangGuard<typeof Typed>(new URL("./__fixtures__/typed-case.ts", import.meta.url));
    try {
      const text: string = await typed.call("describeError", "configuration", 2);
      expect(text).toBe("[configuration][configuration]");
    } finally {
      await typed.close();
    }
  });

  it("rejects with what the export threw: its name, message and code", async () => {
    const error = await (guard.call as Call)("refuses", "set the thing").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "ConfigurationError",
      message: "set the thing",
      code: "configuration",
    });
  });

  it.each([
    ["a backtracking regular expression", "backtracks", [64]],
    ["a synchronous loop", "spins", []],
    ["a promise that never settles", "waitsForever", []],
  ] as const)(
    "turns %s into a HangError that names the call, and the test's thread stays free",
    async (_, name, args) => {
      let turns = 0;
      const ticking = setInterval(() => turns++, 10);
      const error = await (strict.call as Call)(name, ...args).catch((thrown: unknown) => thrown);
      clearInterval(ticking);
      expect(error).toBeInstanceOf(HangError);
      expect(isUnforgetError(error) && error.code).toBe("test_hang");
      expect((error as HangError).message).toContain(`${name}() in ${CASES.href} did not finish within 1 s`);
      expect((error as HangError).call).toBe(name);
      // The timer ran while the worker was held: the hang never reached this thread.
      expect(turns).toBeGreaterThan(0);
    },
  );

  it("starts a new worker for the call after a hang", async () => {
    const call = strict.call as Call;
    await expect(call("spins")).rejects.toBeInstanceOf(HangError);
    expect(await call("add", 1, 1)).toBe(2);
  });

  it("says what to do when the export is missing, the result cannot be copied or the module is not a path", async () => {
    const call = guard.call as Call;
    const missing = await call("nothing").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GuardedCallError);
    expect((missing as Error).message).toContain("has no exported function nothing");
    const uncloneable = await call("returnsAFunction").catch((e: unknown) => e);
    expect(uncloneable).toBeInstanceOf(GuardedCallError);
    expect((uncloneable as Error).message).toContain("return plain data");
    expect(() => createHangGuard("./guard-cases.mjs")).toThrow(ConfigurationError);
    const absent = createHangGuard(new URL("./__fixtures__/absent.mjs", import.meta.url));
    const notLoaded = await (absent.call as Call)("add").catch((e: unknown) => e);
    await absent.close();
    expect(notLoaded).toBeInstanceOf(GuardedCallError);
    expect((notLoaded as Error).message).toContain("could not be loaded");
  });
});
