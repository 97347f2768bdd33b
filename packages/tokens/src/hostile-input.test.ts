import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  type CountTokensRequest,
  createMessage,
  createUsage,
  isUnforgetError,
  type Message,
  type TokenCounter,
} from "@unforget/core";
import { importSessionText } from "@unforget/importers";
import { loadCorpusFile, sampleCorpus } from "@unforget/testing/corpus";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateMessagesTokens, estimateMessageTokens } from "./estimate-message-tokens.ts";
import { estimateRequestTokens } from "./estimate-request-tokens.ts";
import { estimateTextTokens } from "./estimate-text-tokens.ts";
import type { EstimatorProfile } from "./estimator-coefficients.ts";
import { createFallbackCounter } from "./fallback-counter.ts";
import { createTokenCountSession } from "./token-count-session.ts";
import { measureContextTokens, tokenCountWithEstimation } from "./token-count-with-estimation.ts";

// Hostile input: mutated corpus sessions and texts fed to every counter and estimator. Only typed
// errors, counts that are finite non-negative integers, and work linear in the input, measured as property
// reads on the input (never as time).

const PROFILES: EstimatorProfile[] = ["claude", "o200k", "cl100k"];

function listFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

// The sample corpus (sessions of every format the importers read, texts of every class): small, and in the
// repository.
const corpus = sampleCorpus();
const conversations: Message[][] = corpus.sessions
  .flatMap((session) => {
    const imported = importSessionText(loadCorpusFile(session.path));
    return imported.instances.length > 0 ? imported.instances.map((instance) => instance.result) : [imported];
  })
  .map((result) => result.messages)
  .filter((messages) => messages.length > 0);
const texts: string[] = [
  ...listFiles(join(corpus.dir, "text")),
  ...corpus.sessions.map((session) => session.path),
].map((path) => loadCorpusFile(path));

// ---------------------------------------------------------------------------------------------------------
// Mutations of JSON-like values

const HOSTILE_VALUES: unknown[] = [
  null,
  undefined,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -1,
  -0,
  0,
  0.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  "",
  "x",
  "\uD800",
  true,
  {},
  [],
  { toString: 1 },
  10n,
  { type: "text" },
  { type: "text", text: 42 },
  { type: "image", source: null, width: Number.POSITIVE_INFINITY, height: 1e308 },
  { type: "image", width: 1e308, height: 1e308 },
  { type: "document", source: { type: "base64" }, pages: 1e308 },
  { type: "tool_result", content: { nested: true } },
  { type: "tool_use", name: 5, input: 10n },
  { role: "assistant", content: [], usage: { inputTokens: 1e308, outputTokens: 1e308 } },
  { role: "assistant", content: "text", usage: { inputTokens: "5" }, responseId: 5 },
];

type Mutation =
  | { kind: "truncate-list"; at: number }
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "truncate-string"; at: number; cut: number }
  | { kind: "flip"; at: number; position: number; unit: number }
  | { kind: "nest"; at: number; depth: number; asObject: boolean }
  | { kind: "repeat-string"; at: number; times: number }
  | { kind: "repeat-item"; at: number; times: number };

const fraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("truncate-list" as const), at: fraction }),
  fc.record({
    kind: fc.constant("replace" as const),
    at: fraction,
    value: fc.oneof(fc.constantFrom(...HOSTILE_VALUES), fc.string(), fc.double(), fc.integer()),
  }),
  fc.record({ kind: fc.constant("truncate-string" as const), at: fraction, cut: fraction }),
  fc.record({
    kind: fc.constant("flip" as const),
    at: fraction,
    position: fraction,
    unit: fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0, 0xd800, 0xdc00, 0xfffd, 0xffff)),
  }),
  fc.record({
    kind: fc.constant("nest" as const),
    at: fraction,
    depth: fc.integer({ min: 1, max: 20_000 }),
    asObject: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("repeat-string" as const),
    at: fraction,
    times: fc.integer({ min: 2, max: 100 }),
  }),
  fc.record({
    kind: fc.constant("repeat-item" as const),
    at: fraction,
    times: fc.integer({ min: 2, max: 1_000 }),
  }),
);

interface Slot {
  parent: Record<string | number, unknown>;
  key: string | number;
}

/** Every place a value can be replaced, in a deterministic order (iterative: mutated values nest deeply). */
function slotsOf(root: unknown): Slot[] {
  const slots: Slot[] = [];
  const pending: unknown[] = [root];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) {
      const parent = value as Record<string | number, unknown>;
      slots.push({ parent, key });
      pending.push(parent[key]);
    }
  }
  return slots;
}

function pick<T>(items: readonly T[], at: number): T | undefined {
  return items.length === 0 ? undefined : items[Math.floor(at * items.length)];
}

function applyMutation(root: { value: unknown }, mutation: Mutation): void {
  const slots = slotsOf(root);
  const stringSlots = () => slots.filter((slot) => typeof slot.parent[slot.key] === "string");
  switch (mutation.kind) {
    case "truncate-list": {
      const lists = slots.filter((slot) => Array.isArray(slot.parent[slot.key]));
      const slot = pick(lists, mutation.at);
      if (slot === undefined) return;
      const list = slot.parent[slot.key] as unknown[];
      list.length = Math.floor(mutation.at * list.length);
      return;
    }
    case "replace": {
      const slot = pick(slots, mutation.at);
      if (slot !== undefined) slot.parent[slot.key] = mutation.value;
      return;
    }
    case "truncate-string": {
      const slot = pick(stringSlots(), mutation.at);
      if (slot === undefined) return;
      const text = slot.parent[slot.key] as string;
      slot.parent[slot.key] = text.slice(0, Math.floor(mutation.cut * text.length));
      return;
    }
    case "flip": {
      const slot = pick(stringSlots(), mutation.at);
      if (slot === undefined) return;
      const text = slot.parent[slot.key] as string;
      const position = Math.floor(mutation.position * text.length);
      slot.parent[slot.key] =
        text.slice(0, position) + String.fromCharCode(mutation.unit) + text.slice(position + 1);
      return;
    }
    case "nest": {
      const slot = pick(slots, mutation.at);
      if (slot === undefined) return;
      let value = slot.parent[slot.key];
      for (let depth = 0; depth < mutation.depth; depth++)
        value = mutation.asObject ? { content: value } : [value];
      slot.parent[slot.key] = value;
      return;
    }
    case "repeat-string": {
      const slot = pick(stringSlots(), mutation.at);
      if (slot === undefined) return;
      const text = (slot.parent[slot.key] as string).slice(0, 2_000);
      slot.parent[slot.key] = text.repeat(mutation.times);
      return;
    }
    case "repeat-item": {
      const lists = slots.filter((slot) => Array.isArray(slot.parent[slot.key]));
      const slot = pick(lists, mutation.at);
      if (slot === undefined) return;
      const list = slot.parent[slot.key] as unknown[];
      const item = pick(list, mutation.at);
      if (item === undefined) return;
      const position = list.indexOf(item);
      // The same object many times over: a huge run of identical messages, blocks or values. Repeats of
      // repeats would multiply; the input is kept under MAX_WEIGHT so that a case stays fast.
      const room = Math.floor((MAX_WEIGHT - weightOf(root)) / weightOf(item));
      const times = Math.min(mutation.times, room);
      if (times > 0) list.splice(position, 0, ...new Array<unknown>(times).fill(item));
      return;
    }
  }
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Tree size plus text length / 50: what a case costs to count. */
const MAX_WEIGHT = 10_000;

function weightOf(root: unknown): number {
  let weight = 1;
  const pending: unknown[] = [root];
  while (pending.length > 0 && weight <= MAX_WEIGHT) {
    const value = pending.pop();
    if (typeof value === "string") weight += value.length / 50;
    if (typeof value !== "object" || value === null) continue;
    for (const child of Object.values(value)) {
      weight++;
      pending.push(child);
    }
  }
  return weight;
}

/** A corpus conversation (cut to at most `limit` messages) with the mutations applied, in a fresh copy. */
function mutated(index: number, start: number, limit: number, mutations: Mutation[]): unknown {
  const conversation = conversations[index % conversations.length]!;
  const from = Math.floor(start * conversation.length);
  const root = { value: clone(conversation.slice(from, from + limit)) };
  for (const mutation of mutations) applyMutation(root, mutation);
  return root.value;
}

const caseArbitrary = (limit: number, maxMutations: number) =>
  fc.record({
    index: fc.nat(),
    start: fraction,
    limit: fc.integer({ min: 1, max: limit }),
    mutations: fc.array(mutationArbitrary, { minLength: 1, maxLength: maxMutations }),
  });

// ---------------------------------------------------------------------------------------------------------
// What every result must be

function expectCount(value: unknown, label: string): void {
  if (!(typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0))) {
    expect.fail(`${label} returned ${String(value)}, not a finite non-negative integer`);
  }
}

/** Runs `call`; a thrown error must be typed. Returns undefined when it threw. */
function typedOnly<T>(label: string, call: () => T): T | undefined {
  try {
    return call();
  } catch (error) {
    if (!isUnforgetError(error)) expect.fail(`${label} threw an untyped ${String(error)}`);
    return undefined;
  }
}

async function typedOnlyAsync<T>(label: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (!isUnforgetError(error)) expect.fail(`${label} threw an untyped ${String(error)}`);
    return undefined;
  }
}

const PRIMARIES: Array<TokenCounter | undefined> = [
  undefined,
  { countTokens: async () => ({ inputTokens: 123, method: "native" }) },
  {
    countTokens: async () => {
      throw new TypeError("boom");
    },
  },
  { countTokens: async () => ({ inputTokens: Number.NaN, method: "native" }) },
  { countTokens: async () => ({ inputTokens: Number.POSITIVE_INFINITY, method: "native" }) },
  { countTokens: async () => ({ inputTokens: "12", method: "native" }) as never },
  { countTokens: async () => null as never },
];

function requestOf(messages: unknown, system: unknown): CountTokensRequest {
  return {
    model: "claude-sonnet-4-5",
    system: system as string,
    messages: messages as Message[],
    tools: [{ name: "read_file", description: "Reads a file", inputSchema: { type: "object" } }],
  };
}

// ---------------------------------------------------------------------------------------------------------
// Work measured as property reads on the input

interface Instrumented<T> {
  value: T;
  reads(): number;
}

/**
 * Wraps a value so that every property read, key listing and descriptor lookup on it (and on everything
 * reached through it) is counted. Children are wrapped on access and cached, so identities stay stable.
 */
function instrument<T>(root: T): Instrumented<T> {
  let reads = 0;
  const proxies = new WeakMap<object, object>();
  const wrap = (value: unknown): unknown => {
    if (typeof value !== "object" || value === null) return value;
    const known = proxies.get(value);
    if (known !== undefined) return known;
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        reads++;
        return wrap(Reflect.get(target, key, receiver));
      },
      has(target, key) {
        reads++;
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        reads++;
        return Reflect.ownKeys(target);
      },
      getOwnPropertyDescriptor(target, key) {
        reads++;
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  return { value: wrap(root) as T, reads: () => reads };
}

/**
 * The size work is measured against: every value of the tree, an object reached twice counted twice (a
 * serialiser writes it twice). Stops counting past `limit`.
 */
function sizeOf(root: unknown, limit = Number.POSITIVE_INFINITY): number {
  let size = 1;
  const pending: unknown[] = [root];
  while (pending.length > 0 && size <= limit) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null) continue;
    for (const child of Object.values(value)) {
      size++;
      pending.push(child);
    }
  }
  return size;
}

/** The properties run hundreds of cases; CI shares two cores with other jobs. Work is bounded by MAX_WEIGHT. */
const PROPERTY_TIMEOUT_MS = 90_000;

/** Reads allowed per unit of input size: a few passes of a few reads each. A quadratic path exceeds it. */
const READS_PER_UNIT = 40;

// ---------------------------------------------------------------------------------------------------------

describe("hostile input: mutated corpus sessions", () => {
  it("loads the corpus", () => {
    expect(conversations.length).toBeGreaterThan(5);
    expect(texts.length).toBeGreaterThan(10);
  });

  it(
    "every counter and estimator returns a finite non-negative integer or a typed error",
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArbitrary(40, 4), fc.nat(), async (input, choice) => {
          const messages = mutated(input.index, input.start, input.limit, input.mutations);
          const list = Array.isArray(messages) ? messages : [messages];
          const profile = PROFILES[choice % PROFILES.length]!;
          for (const message of list.slice(0, 20)) {
            expectCount(
              typedOnly("estimateMessageTokens", () => estimateMessageTokens(message, { profile })),
              "estimateMessageTokens",
            );
            const text =
              typeof message === "object" && message !== null ? (message as Message).content : message;
            expectCount(estimateTextTokens(text as string, profile), "estimateTextTokens");
          }
          const total = typedOnly("estimateMessagesTokens", () =>
            estimateMessagesTokens(messages as Message[], { profile }),
          );
          if (total !== undefined) expectCount(total, "estimateMessagesTokens");
          const counted = typedOnly("tokenCountWithEstimation", () =>
            tokenCountWithEstimation(messages as Message[], { profile, preambleTokens: choice % 1_000 }),
          );
          if (counted !== undefined) expectCount(counted, "tokenCountWithEstimation");
          const request = requestOf(messages, list[0]);
          expectCount(estimateRequestTokens(request, { profile }), "estimateRequestTokens");
          const counter = createFallbackCounter(PRIMARIES[choice % PRIMARIES.length], {
            cache: choice % 2 === 0,
          });
          const result = await typedOnlyAsync("createFallbackCounter", () => counter.countTokens(request));
          expect(result).toBeDefined();
          expectCount(result?.inputTokens, "createFallbackCounter");
        }),
        { numRuns: 30 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "the incremental session agrees with the stateless count as the list grows, on any mutated list",
    () => {
      fc.assert(
        fc.property(caseArbitrary(80, 3), fc.integer({ min: 1, max: 7 }), (input, step) => {
          const messages = mutated(input.index, input.start, input.limit, input.mutations);
          if (!Array.isArray(messages)) {
            expect(() => createTokenCountSession().count(messages as never)).toThrow(
              /not an array of messages/,
            );
            return;
          }
          const session = createTokenCountSession();
          // The session sees every prefix; the stateless count (linear per call) is compared at ~10 of them.
          const checkEvery = Math.max(step, Math.ceil(messages.length / 10));
          for (let end = 0; end <= messages.length; end += step) {
            const prefix = messages.slice(0, end);
            const actual = session.count(prefix);
            expectCount(actual.tokens, "createTokenCountSession");
            expectCount(actual.estimatedTokens, "createTokenCountSession (estimated)");
            if (end % checkEvery < step || end + step > messages.length) {
              expect(actual).toEqual(measureContextTokens(prefix));
            }
          }
        }),
        { numRuns: 40 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "reads the input a bounded number of times per element, whatever its shape",
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArbitrary(40, 3), async (input) => {
          const messages = mutated(input.index, input.start, input.limit, input.mutations);
          const size = sizeOf(messages);
          const bound = READS_PER_UNIT * size + 1_000;
          const measure = async (label: string, call: (value: unknown) => unknown) => {
            const probe = instrument(messages);
            await typedOnlyAsync(label, async () => call(probe.value));
            if (probe.reads() > bound)
              expect.fail(`${label} read the input ${probe.reads()} times (size ${size})`);
          };
          await measure("estimateMessagesTokens", (value) => estimateMessagesTokens(value as Message[]));
          await measure("tokenCountWithEstimation", (value) => tokenCountWithEstimation(value as Message[]));
          await measure("estimateRequestTokens", (value) =>
            estimateRequestTokens(requestOf(value, "system")),
          );
          await measure("createFallbackCounter", (value) =>
            createFallbackCounter(PRIMARIES[1], { cache: true }).countTokens(requestOf(value, "system")),
          );
        }),
        { numRuns: 15 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "a session reads each message a bounded number of times over the whole conversation",
    () => {
      fc.assert(
        fc.property(caseArbitrary(200, 2), (input) => {
          const messages = mutated(input.index, input.start, input.limit, input.mutations);
          if (!Array.isArray(messages)) return;
          // The list is the caller's; its messages are instrumented.
          const probes = messages.map((message) => instrument(message));
          const list = probes.map((probe) => probe.value);
          const session = createTokenCountSession();
          for (let end = 1; end <= list.length; end++) session.count(list.slice(0, end));
          const reads = probes.reduce((sum, probe) => sum + probe.reads(), 0);
          const size = sizeOf(messages);
          if (reads > READS_PER_UNIT * size + 10 * list.length) {
            expect.fail(`the session read ${list.length} messages ${reads} times (size ${size})`);
          }
        }),
        { numRuns: 20 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe("hostile input: mutated corpus texts", () => {
  it(
    "estimates truncated, flipped and repeated texts as counts",
    () => {
      fc.assert(
        fc.property(
          fc.nat(),
          fraction,
          fc.integer({ min: 0, max: 20_000 }),
          fc.array(mutationArbitrary, { maxLength: 4 }),
          (index, start, length, mutations) => {
            const source = texts[index % texts.length]!;
            const from = Math.floor(start * source.length);
            const root = { value: { text: source.slice(from, from + length) } };
            for (const mutation of mutations) if (mutation.kind !== "replace") applyMutation(root, mutation);
            const text = (root.value as { text: unknown }).text;
            for (const profile of PROFILES) {
              const tokens = estimateTextTokens(text as string, profile);
              expectCount(tokens, "estimateTextTokens");
              if (typeof text === "string" && text.length > 0) expect(tokens).toBeGreaterThanOrEqual(1);
            }
          },
        ),
        { numRuns: 100 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe("hostile input: degenerate conversation shapes", () => {
  const usage = createUsage({ inputTokens: 10_000, outputTokens: 100 });

  it("a session over thousands of messages of one response reads each of them a bounded number of times", () => {
    // One response split into 5,000 tool calls, each followed by its result, each carrying the usage.
    const messages: Message[] = [];
    for (let index = 0; index < 5_000; index++) {
      messages.push(
        createMessage("assistant", [{ type: "tool_use", id: `t${index}`, name: "Read", input: {} }], {
          responseId: "msg_same",
          usage,
        }),
        createMessage("user", [{ type: "tool_result", tool_use_id: `t${index}`, content: "ok" }]),
      );
    }
    const probes = messages.map((message) => instrument(message));
    const list = probes.map((probe) => probe.value);
    const session = createTokenCountSession();
    let last = session.count([]);
    for (let end = 1; end <= list.length; end++) last = session.count(list.slice(0, end));
    expect(last).toEqual(measureContextTokens(messages));
    expect(last.anchorIndex).toBe(0);
    const reads = probes.reduce((sum, probe) => sum + probe.reads(), 0);
    expect(reads).toBeLessThanOrEqual(READS_PER_UNIT * sizeOf(messages));
  });

  it("counts 20,000 consecutive same-role messages and 50,000-deep values", () => {
    const messages = Array.from({ length: 20_000 }, (_, index) => createMessage("user", `line ${index}`));
    const probe = instrument(messages);
    expectCount(tokenCountWithEstimation(probe.value), "tokenCountWithEstimation");
    expect(probe.reads()).toBeLessThanOrEqual(READS_PER_UNIT * sizeOf(messages));
    let deep: unknown = "leaf";
    for (let depth = 0; depth < 50_000; depth++) deep = { content: [deep] };
    const request = requestOf(
      [createMessage("user", [{ type: "tool_use", id: "t", name: "n", input: deep as never }])],
      "",
    );
    // 50,000 levels of {"content":[…]} are 700,000 characters of JSON: counted, not dropped.
    const tokens = estimateRequestTokens(request);
    expectCount(tokens, "estimateRequestTokens");
    expect(tokens).toBeGreaterThan(50_000);
  });
});
