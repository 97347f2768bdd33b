import { type CountTokensRequest, createMessage, type TokenCounter } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { estimateRequestTokens } from "./estimate-request-tokens.ts";
import { createFallbackCounter, createHeuristicCounter } from "./fallback-counter.ts";
import { stripUncountableFields } from "./strip-uncountable-fields.ts";

const request: CountTokensRequest = {
  model: "claude-sonnet-4-5",
  messages: [createMessage("user", "How many tokens is this?")],
  tools: [
    { name: "read_file", inputSchema: { type: "object" } },
    { name: "tool_search_tool_regex", inputSchema: { type: "object" } },
    { name: "grep", inputSchema: { type: "object" }, defer_loading: true } as never,
  ],
};

const native = (inputTokens: number, seen: CountTokensRequest[] = []): TokenCounter => ({
  async countTokens(counted) {
    seen.push(counted);
    return { inputTokens, method: "native" };
  },
});

describe("createFallbackCounter", () => {
  it("returns the native count and says so", async () => {
    const counter = createFallbackCounter(native(42));
    expect(await counter.countTokens(request)).toEqual({ inputTokens: 42, method: "native" });
  });

  it("strips tool-search tools and beta-only fields before counting, without touching the request", async () => {
    const seen: CountTokensRequest[] = [];
    await createFallbackCounter(native(1, seen)).countTokens(request);
    expect(seen[0]?.tools?.map((tool) => tool.name)).toEqual(["read_file", "grep"]);
    expect(seen[0]?.tools?.[1]).not.toHaveProperty("defer_loading");
    expect(request.tools).toHaveLength(3);
    const plain = { model: "m", messages: [] };
    expect(stripUncountableFields(plain)).toBe(plain);
  });

  it("falls back to the heuristic when the native counter throws", async () => {
    const failing: TokenCounter = {
      async countTokens() {
        throw new Error("503 overloaded");
      },
    };
    const reasons: string[] = [];
    const counted = await createFallbackCounter(failing, {
      onFallback: (reason) => reasons.push(reason),
    }).countTokens(request);
    expect(counted.method).toBe("heuristic");
    expect(counted.inputTokens).toBe(estimateRequestTokens(request));
    expect(counted.fallbackReason).toContain("503 overloaded");
    expect(reasons).toHaveLength(1);
  });

  it("falls back when the native counter throws synchronously", async () => {
    const failing = {
      countTokens() {
        throw new TypeError("not a function");
      },
    } as unknown as TokenCounter;
    expect((await createFallbackCounter(failing).countTokens(request)).method).toBe("heuristic");
  });

  it("falls back when the native counter hangs, and aborts it", async () => {
    let aborted = false;
    const hanging: TokenCounter = {
      countTokens(_request, options) {
        options?.signal?.addEventListener("abort", () => {
          aborted = true;
        });
        return new Promise(() => {});
      },
    };
    const counted = await createFallbackCounter(hanging, { timeoutMs: 20 }).countTokens(request);
    expect(counted.method).toBe("heuristic");
    expect(counted.fallbackReason).toMatch(/timed out/);
    expect(aborted).toBe(true);
  });

  it.each([
    ["undefined", undefined],
    ["a string", "12"],
    ["NaN", { inputTokens: Number.NaN, method: "native" }],
    ["a negative count", { inputTokens: -5, method: "native" }],
    ["a fraction", { inputTokens: 1.5, method: "native" }],
  ])("falls back when the native counter returns garbage (%s)", async (_label, garbage) => {
    const broken = { countTokens: async () => garbage } as unknown as TokenCounter;
    const counted = await createFallbackCounter(broken).countTokens(request);
    expect(counted.method).toBe("heuristic");
    expect(counted.fallbackReason).toMatch(/invalid result/);
  });

  it.each([
    ["a null tool definition", { model: "m", messages: [], tools: [null] }],
    ["tools that are not a list", { model: "m", messages: [], tools: { read_file: {} } }],
    ["a tool without a name", { model: "m", messages: [], tools: [{ inputSchema: {} }] }],
    ["no request at all", null],
  ])("never throws on a malformed request (%s): it estimates instead", async (_label, malformed) => {
    for (const options of [{}, { cache: true }]) {
      const counted = await createFallbackCounter(native(7), options).countTokens(malformed as never);
      expect(counted.method).toBe("heuristic");
      expect(Number.isSafeInteger(counted.inputTokens) && counted.inputTokens >= 0).toBe(true);
      expect(counted.fallbackReason).toBeTruthy();
    }
  });

  it("skips the native counter for unsupported models and when none is configured", async () => {
    const seen: CountTokensRequest[] = [];
    const counter = createFallbackCounter(native(7, seen), {
      supportsModel: (model) => model.startsWith("claude"),
    });
    const counted = await counter.countTokens({ ...request, model: "gemini-2.5-pro" });
    expect(counted.method).toBe("heuristic");
    expect(counted.fallbackReason).toMatch(/gemini-2.5-pro/);
    expect(seen).toHaveLength(0);
    expect((await createFallbackCounter(undefined).countTokens(request)).method).toBe("heuristic");
  });

  it("does not call the native counter once the caller has aborted", async () => {
    const seen: CountTokensRequest[] = [];
    const controller = new AbortController();
    controller.abort();
    const counted = await createFallbackCounter(native(7, seen)).countTokens(request, {
      signal: controller.signal,
    });
    expect(counted.method).toBe("heuristic");
    expect(seen).toHaveLength(0);
  });

  it("caches native counts of identical requests when asked to", async () => {
    const seen: CountTokensRequest[] = [];
    const counter = createFallbackCounter(native(99, seen), { cache: 2 });
    await counter.countTokens(request);
    expect(await counter.countTokens(request)).toEqual({ inputTokens: 99, method: "native" });
    expect(seen).toHaveLength(1);
    await counter.countTokens({ ...request, model: "b" });
    await counter.countTokens({ ...request, model: "c" });
    await counter.countTokens(request);
    expect(seen).toHaveLength(4);
  });
});

describe("createHeuristicCounter", () => {
  it("estimates with the configured options", async () => {
    const counted = await createHeuristicCounter({ padding: 1 }).countTokens(request);
    expect(counted).toEqual({
      inputTokens: estimateRequestTokens(request, { padding: 1 }),
      method: "heuristic",
    });
  });
});
